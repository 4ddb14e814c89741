/**
 * A minimal post-deploy step built on the real kit (components/steps/kit/), for the engine-level
 * re-run test: its implementation only records what it was given. Loaded by the kit's tsx
 * shell in the dynamic-provider process, exactly as the real steps' implementations are.
 */
import { nonEmptyString, rerun } from "../../../components/steps/kit/inputs.js";
import { dynamicProtocol } from "../../../components/steps/kit/protocol.js";
import { declareStep, output } from "../../../components/steps/kit/step.js";

/** It follows others (a `triggers` field, as TopologyCheck's). */
export const stampStep = declareStep({
  type: "StampStep",
  follows: true,
  fields: {
    /** What the step works on: a change re-runs it (replaces it, like BenchmarkResults). */
    value: rerun(nonEmptyString()),
  },
  outputs: { seen: output<string>() },
});

export const { create, diff, update } = dynamicProtocol(stampStep, {
  run: (i) => Promise.resolve({ seen: i.value }),
  idOf: (i) => i.value,
  replaceOnChange: true,
});
