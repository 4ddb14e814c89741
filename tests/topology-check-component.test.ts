/**
 * TopologyCheck under Pulumi mocks: one dynamic resource `${name}-run` with the check's inputs,
 * secrets marked, `after` values (resources by URN) as re-run triggers, and a serialized
 * provider that carries no secret.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as pulumi from "@pulumi/pulumi";
import type * as CheckModule from "../components/steps/topology-check/component.js";
import { installMocks, settle, valueOf, type MockRecorder } from "./support/pulumi-mocks.js";

const DYNAMIC = "pulumi-nodejs:dynamic:Resource";
const password = "check-pw-do-not-leak";
const kubeconfig = "kubeconfig-with-token-do-not-leak";
const report = { ok: true, mode: "cluster", failures: [], shards: [], primariesPerZone: { a: 1 }, nodeCount: 6 };

class Step extends pulumi.CustomResource {
  constructor(name: string) {
    super("test:index:Step", name, {});
  }
}

describe("TopologyCheck component (mocks)", () => {
  let mocks: MockRecorder;
  let mod: typeof CheckModule;

  beforeAll(async () => {
    mocks = installMocks({ outputs: (r) => (r.type === DYNAMIC ? { report, table: "VERIFY: PASS" } : {}) });
    mod = await import("../components/steps/topology-check/component.js");
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
    mocks.get("valkey-on-eks:checks:TopologyCheck", "after-bench");
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
    expect(run.inputs).toMatchObject({ mode: "replication", connector: "direct", replicaLagBytes: 2048, countKeys: false, triggers: [] });
    expect(run.inputs).not.toHaveProperty("password");
  });
});
