/**
 * The re-run mechanism of the post-deploy steps under the real Pulumi engine (Automation API,
 * the CLI built by the toolchain; no cluster needed): a step built on the real kit
 * (support/stamp-step.ts, loaded by the kit's tsx shell in the dynamic-provider process) is
 * replaced when its input changes and gets a new runStamp; a follower keyed the way TopologyCheck
 * keys its `after` resources (`triggerOf`: the runStamp) runs again, while a follower keyed on the
 * step's URN (what TopologyCheck did before) does not: the URN of a replaced resource is the same.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceInputs } from "../../components/steps/kit/resource-inputs.js";
import { tsModuleProvider } from "../../components/steps/kit/ts-module-provider.js";
import { triggerOf } from "../../components/steps/kit/define-step.js";
import { stampStep } from "./support/stamp-step.js";
import { createPulumiEnv, createStack, tail, type E2eStack, type PulumiEnv } from "./support/pulumi-harness.js";

class StampStep extends pulumi.dynamic.Resource {
  declare readonly runStamp: pulumi.Output<string>;
  declare readonly seen: pulumi.Output<string>;
  constructor(name: string, args: { value: pulumi.Input<string>; triggers?: pulumi.Input<unknown>[] }) {
    const provider = tsModuleProvider(fileURLToPath(new URL("./support/stamp-step.ts", import.meta.url)));
    super(provider, name, { ...resourceInputs(stampStep.fields, args), runStamp: undefined, seen: undefined });
  }
}

function program(): Promise<Record<string, unknown>> {
  const value = new pulumi.Config("valkey-on-eks").require("value");
  const step = new StampStep("results", { value });
  const byStamp = new StampStep("after-by-stamp", { value: "check", triggers: [triggerOf(step)] });
  const byUrn = new StampStep("after-by-urn", { value: "check", triggers: [step.urn] });
  return Promise.resolve({ step: step.runStamp, byStamp: byStamp.runStamp, byUrn: byUrn.runStamp, seen: step.seen });
}

let env: PulumiEnv;
beforeAll(async () => {
  env = await createPulumiEnv({ kubernetes: false });
}, 120_000);
afterAll(() => env?.dispose());

describe("post-deploy step re-runs under the real engine", () => {
  it("a replaced step gets a new runStamp; a follower on the stamp re-runs, one on the URN does not", async () => {
    const s: E2eStack = await createStack(env, { value: "workload-a" }, { program });
    try {
      const stamps = async (): Promise<Record<string, string>> => {
        const res = await s.stack.up({ onOutput: (o) => s.log.push(o) });
        expect(res.summary.result, tail(s.log)).toBe("succeeded");
        return Object.fromEntries(Object.entries(res.outputs).map(([k, v]) => [k, String(v.value)]));
      };
      const first = await stamps();
      expect(first.seen).toBe("workload-a");

      await s.stack.setConfig("valkey-on-eks:value", { value: "workload-b" });
      const second = await stamps();
      expect(second.seen).toBe("workload-b");
      expect(second.step).not.toBe(first.step);
      expect(second.byStamp).not.toBe(first.byStamp);
      // The old way: the URN of the replaced step is unchanged, so this follower went stale.
      expect(second.byUrn).toBe(first.byUrn);

      // Nothing changed: nothing runs.
      const third = await stamps();
      expect(third).toEqual(second);
    } finally {
      await s.dispose();
    }
  }, 300_000);
});
