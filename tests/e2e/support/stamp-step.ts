/**
 * A minimal post-deploy step built on the real kit (components/steps/kit/), for the engine-level
 * re-run test: its implementation only records what it was given. Loaded by the kit's tsx
 * shell in the dynamic-provider process, exactly as the real steps' implementations are.
 */
import { z } from "zod";
import { nonEmptyString, rerun } from "../../../components/steps/kit/inputs.js";
import { dynamicProtocol } from "../../../components/steps/kit/protocol.js";

export const stampStepFields = {
  /** What the step works on: a change re-runs it (replaces it, like BenchmarkResults). */
  value: rerun(nonEmptyString()),
  /** What the step follows (a TopologyCheck's `triggers`). */
  triggers: rerun(z.array(z.unknown()).default([])),
};

export const { create, diff, update } = dynamicProtocol({
  fields: stampStepFields,
  run: (i) => Promise.resolve({ seen: i.value }),
  idOf: (p) => String(p.value),
  replaceOnChange: true,
});
