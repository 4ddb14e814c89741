/**
 * The replication stack under Pulumi mocks: the topology check goes through the Sentinels (its
 * inputs name them), and the stack report carries the Sentinel endpoint, the master name and
 * the Sentinels the check saw; no plain password anywhere.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installMocks, settle, valueOf } from "../support/pulumi-mocks.js";

const SENTINELS = [0, 1, 2].map((i) => ({
  address: `10.0.${i}.9:26379`,
  zone: `us-west-2${"abc"[i]}`,
  reachable: true,
  agrees: i !== 2,
  primary: "valkey-1.valkey-headless.valkey.svc.cluster.local:6379",
}));
const CHECK_REPORT = {
  ok: true,
  mode: "replication",
  failures: [],
  nodeCount: 4,
  primariesPerZone: { "us-west-2b": 1 },
  masterName: "valkey-primary",
  sentinels: SENTINELS,
  shards: [
    {
      primary: {
        address: "valkey-1.valkey-headless.valkey.svc.cluster.local:6379",
        zone: "us-west-2b",
        slotRanges: [],
        slotCount: 0,
        keys: 0,
      },
      replicas: [],
    },
  ],
};
const recorder = installMocks({
  outputs: (r) => (r.name === "valkey-check-run" ? { report: CHECK_REPORT, table: "VERIFY: PASS" } : {}),
});
const { parseStackConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");

const PASSWORD = "pw-mock-sentinel-9Zq";
const dir = mkdtempSync(join(tmpdir(), "vbench-sentinel-program-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

describe("replication stack with Sentinel (mocks)", () => {
  it("checks through the Sentinels and reports them with the endpoints", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig },
      valkey: { mode: "replication" },
      benchmark: { enabled: false },
      checks: { connector: "direct" },
    });
    const out = runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    const check = recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-run");
    expect(check.inputs).toMatchObject({
      mode: "replication",
      selector:
        "app.kubernetes.io/name=valkey,app.kubernetes.io/instance=valkey,app.kubernetes.io/part-of=valkey-on-eks,app.kubernetes.io/managed-by=pulumi",
      headlessService: "valkey-headless",
      sentinel: {
        selector:
          "app.kubernetes.io/name=valkey-sentinel,app.kubernetes.io/instance=valkey,app.kubernetes.io/part-of=valkey-on-eks,app.kubernetes.io/managed-by=pulumi,app.kubernetes.io/component=sentinel",
        headlessService: "valkey-sentinel-headless",
        port: 26379,
        masterName: "valkey-primary",
      },
    });
    const report = await valueOf(out.report);
    expect(report.schemaVersion).toBe(1);
    expect(report.endpoints).toEqual({
      namespace: "valkey",
      write: "valkey-write.valkey.svc.cluster.local",
      read: "valkey-read.valkey.svc.cluster.local",
      port: 6379,
      sentinel: "valkey-sentinel.valkey.svc.cluster.local",
      sentinelPort: 26379,
      masterName: "valkey-primary",
    });
    expect(report.sentinels).toEqual(
      SENTINELS.map(({ address, zone, reachable, agrees }) => ({ address, zone, reachable, agrees })),
    );
    expect(report.topology?.primaries[0]?.address).toBe("valkey-1.valkey-headless.valkey.svc.cluster.local:6379");
    for (const r of recorder.resources)
      expect(JSON.stringify(r.redacted), `${r.type} ${r.name}`).not.toContain(PASSWORD);
    expect(recorder.resources.filter((r) => r.type.startsWith("kubernetes:rbac"))).toEqual([]);
  });
});
