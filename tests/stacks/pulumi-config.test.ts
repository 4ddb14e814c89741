import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { decodeConfigValue } from "../../stacks/config-values.js";
import { loadPulumiConfig } from "../../stacks/pulumi-config.js";
import { stackReport, STACK_REPORT_VERSION } from "../../stacks/outputs.js";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { toCheckReport } from "../../core/verify/to-check-report.js";

const SECRET = "pw-Z9q-very-distinct";

function withConfig(config: Record<string, string>, secretKeys: string[] = []): void {
  pulumi.runtime.setAllConfig(config, secretKeys);
}

function runErrorOf(fn: () => unknown): pulumi.RunError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(pulumi.RunError);
    return err as pulumi.RunError;
  }
  throw new Error("expected a RunError");
}

describe("reading the stack config from the Pulumi runtime", () => {
  it("decodes the JSON Pulumi uses for object-valued keys and keeps plain strings", () => {
    expect(decodeConfigValue('{"mode":"cluster"}')).toEqual({ mode: "cluster" });
    expect(decodeConfigValue("[1,2]")).toEqual([1, 2]);
    expect(decodeConfigValue("true")).toBe(true);
    expect(decodeConfigValue("3")).toBe(3);
    expect(decodeConfigValue("cluster")).toBe("cluster");
    expect(decodeConfigValue("{not json")).toBe("{not json");
  });

  it("parses a valid stack and keeps the password a secret Output", async () => {
    withConfig(
      {
        "valkey-on-eks:valkey": '{"mode":"cluster","cluster":{"primaries":3}}',
        "valkey-on-eks:password": SECRET,
        "aws:region": "us-west-2",
      },
      ["valkey-on-eks:password"],
    );
    const loaded = loadPulumiConfig();
    expect(loaded.config.valkey.mode).toBe("cluster");
    expect(loaded.config.valkey.pods).toBe(6);
    expect(loaded.password).toBe("secret");
    expect(JSON.stringify(loaded.config)).not.toContain(SECRET);
    if (loaded.passwordSecret === undefined) throw new Error("password expected");
    expect(await pulumi.isSecret(loaded.passwordSecret)).toBe(true);
  });

  it("fails with the schema's message naming every bad key, as a RunError (no stack trace), never echoing the password", () => {
    withConfig({
      "valkey-on-eks:valkey": '{"mode":"cluster","cluster":{"primaries":2}}',
      "valkey-on-eks:password": SECRET,
      "replicas": "3",
    });
    const err = runErrorOf(() => loadPulumiConfig());
    expect(err.message).toContain("valkey.cluster.primaries: must be ≥ 3");
    expect(err.message).toContain("password: valkey-on-eks:password is stored in plain text");
    expect(err.message).toContain("replicas: config keys must be namespaced; did you mean valkey-on-eks:replicas?");
    expect(err.message).not.toContain(SECRET);
  });

  it("requires the password when auth is on", () => {
    withConfig({});
    expect(runErrorOf(() => loadPulumiConfig()).message).toMatch(
      /password: required while valkey\.auth\.enabled is true/,
    );
    withConfig({ "valkey-on-eks:valkey": '{"auth":{"enabled":false}}' });
    expect(loadPulumiConfig().passwordSecret).toBeUndefined();
  });
});

describe("stack report", () => {
  const { config } = parseStackConfig({ valkey: { mode: "cluster" } });
  const report: TopologyReport = {
    ok: false,
    mode: "cluster",
    failures: [
      { code: "NO_CROSS_AZ_REPLICA", message: "primary a has no replica in another zone", node: "a:6379" },
      { code: "NO_CROSS_AZ_REPLICA", message: "primary b has no replica in another zone", node: "b:6379" },
    ],
    shards: [
      {
        primary: { address: "a:6379", zone: "us-west-2a", slotRanges: ["0-16383"], slotCount: 16384, keys: 10 },
        replicas: [{ address: "b:6379", zone: undefined, crossAz: false, linkUp: true }],
      },
    ],
    primariesPerZone: { "us-west-2a": 1 },
    nodeCount: 2,
  };

  it("has the documented, versioned shape with null for what did not run", () => {
    const endpoints = { namespace: "valkey", write: "valkey-cluster.valkey.svc.cluster.local", read: null, port: 6379 };
    const r = stackReport("cluster", config, endpoints, toCheckReport(report), undefined);
    expect(r.schemaVersion).toBe(STACK_REPORT_VERSION);
    expect(r).toMatchObject({
      project: "valkey-on-eks",
      stack: "cluster",
      platform: "eks",
      mode: "cluster",
      pods: 6,
      benchmark: null,
    });
    expect(r.topology?.failureCodes).toEqual(["NO_CROSS_AZ_REPLICA"]);
    expect(r.topology?.primaries[0]?.replicas[0]).toEqual({ address: "b:6379", zone: null, crossAz: false });
    expect(r.versions).toEqual({
      valkeyImage: versions.VALKEY_IMAGE,
      server: null,
      client: null,
      kubernetesVersion: versions.EKS_VERSION,
      karpenterChart: versions.KARPENTER_CHART_VERSION,
    });
    // JSON-safe: no undefined anywhere (dashboards read it as JSON).
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(stackReport("cluster", config, endpoints, undefined, undefined).topology).toBeNull();
  });
});
