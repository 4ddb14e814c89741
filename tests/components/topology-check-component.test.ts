/**
 * TopologyCheck under Pulumi mocks: one dynamic resource `${name}-run` with the check's inputs,
 * secrets marked, `after` values as re-run triggers (a step with a runStamp by that stamp, any
 * other resource by URN), runId, and a serialized provider that carries no secret.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as pulumi from "@pulumi/pulumi";
import type * as CheckModule from "../../components/steps/topology-check/component.js";
import { installMocks, settle, valueOf, type MockRecorder } from "../support/pulumi-mocks.js";

const DYNAMIC = "pulumi-nodejs:dynamic:Resource";
const password = "check-pw-do-not-leak";
const kubeconfig = "kubeconfig-with-token-do-not-leak";
const report = { ok: true, mode: "cluster", failures: [], shards: [], primariesPerZone: { a: 1 }, nodeCount: 6 };

class Step extends pulumi.CustomResource {
  constructor(name: string) {
    super("test:index:Step", name, {});
  }
}

/** A post-deploy step: each run gives a new runStamp. */
class StampedStep extends pulumi.ComponentResource {
  readonly runStamp: pulumi.Output<string>;
  constructor(name: string, stamp: string) {
    super("test:index:StampedStep", name, {});
    this.runStamp = pulumi.output(stamp);
    this.registerOutputs({ runStamp: this.runStamp });
  }
}

describe("TopologyCheck component (mocks)", () => {
  let mocks: MockRecorder;
  let mod: typeof CheckModule;

  beforeAll(async () => {
    mocks = installMocks({ outputs: (r) => (r.type === DYNAMIC ? { report, table: "VERIFY: PASS" } : {}) });
    mod = await import("../../components/steps/topology-check/component.js");
  });

  it("registers the check with its inputs, defaults, secrets and after-triggers", async () => {
    const step = new Step("bench");
    const check = new mod.TopologyCheck("after-bench", {
      mode: "cluster",
      namespace: "valkey",
      selector: "app=v",
      kubeconfig,
      password,
      expect: { primaries: 3, replicasPerPrimary: 1 },
      after: [step, pulumi.output("run-42")],
    });
    expect(await valueOf(check.report)).toEqual(report);
    expect(await valueOf(check.table)).toBe("VERIFY: PASS");
    await settle();
    mocks.get("valkey-on-eks:steps:TopologyCheck", "after-bench");
    const run = mocks.get(DYNAMIC, "after-bench-run");
    expect(run.inputs).toMatchObject({
      mode: "cluster",
      namespace: "valkey",
      selector: "app=v",
      connector: "port-forward",
      countKeys: true,
      expect: { primaries: 3, replicasPerPrimary: 1 },
      triggers: [await valueOf(step.urn), "run-42"],
    });
    expect(run.redacted.kubeconfig).toBe("[secret]");
    expect(run.redacted.password).toBe("[secret]");
    const provider = run.inputs.__provider as string;
    expect(provider).toContain("topology-check/implementation.ts");
    expect(provider).not.toContain(password);
    expect(provider).not.toContain(kubeconfig);
  });

  it("follows a step with a runStamp by its stamp (its URN never changes), and passes runId", async () => {
    const results = new StampedStep("results", "2026-11-23T10:00:00.000Z/1234abcd");
    new mod.TopologyCheck("after-results", {
      mode: "replication",
      namespace: "valkey",
      selector: "app=r",
      kubeconfig,
      runId: "verify-2",
      after: [results],
    });
    await settle();
    const run = mocks.get(DYNAMIC, "after-results-run");
    expect(run.inputs.triggers).toEqual(["2026-11-23T10:00:00.000Z/1234abcd"]);
    expect(run.inputs.runId).toBe("verify-2");
  });

  it("replication mode with the lag threshold and key counting off", async () => {
    new mod.TopologyCheck("repl", {
      mode: "replication",
      namespace: "valkey",
      selector: "app=r",
      connector: "direct",
      kubeconfig,
      replicaLagBytes: 2048,
      countKeys: false,
    });
    await settle();
    const run = mocks.get(DYNAMIC, "repl-run");
    expect(run.inputs).toMatchObject({
      mode: "replication",
      connector: "direct",
      replicaLagBytes: 2048,
      countKeys: false,
      triggers: [],
    });
    expect(run.inputs).not.toHaveProperty("password");
  });
});
