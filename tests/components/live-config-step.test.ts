/**
 * The LiveConfig step's provider protocol: created (a new stack, or one from before the step), it
 * sets nothing and reaches no member (the members started from the ConfigMap holding these
 * values); a change of the directives is an update that re-runs it. The update's CONFIG SET /
 * CONFIG GET runs against real servers in live-config-real.test.ts and on real pods.
 */
import { describe, expect, it } from "vitest";
import { create, diff } from "../../components/steps/live-config/implementation.js";

const inputs = {
  // Not a kubeconfig: reaching the cluster would fail.
  kubeconfig: "not a kubeconfig",
  namespace: "valkey",
  selector: "app.kubernetes.io/instance=valkey",
  directives: [{ name: "maxmemory-policy", value: "allkeys-lru" }],
};

describe("LiveConfig step protocol", () => {
  it("create sets nothing and reaches no member", async () => {
    const r = await create(inputs);
    expect(r.outs.applied).toEqual([]);
    expect(r.outs.pods).toEqual([]);
  });

  it("a change of the directives is an update; the same directives change nothing", () => {
    const changed = { ...inputs, directives: [{ name: "maxmemory-policy", value: "noeviction" }] };
    expect(diff("id", inputs, changed)).toMatchObject({ changes: true, replaces: [] });
    expect(diff("id", inputs, inputs)).toMatchObject({ changes: false });
  });
});
