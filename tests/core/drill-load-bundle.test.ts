/**
 * The in-cluster drill load as the Job runs it: the esbuild bundle `load.mjs` run by a plain
 * `node` (no node_modules next to it) with the Job contract's env vars, against REAL local
 * topologies (a Sentinel replication topology with its HAProxy write endpoint, and a cluster).
 * Its stdout must parse back (record-lines.ts) into measured records whose keys are really there.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { labelRanges, parseStreamName, shardLabel } from "../../core/drill/writers.js";
import { splitSlots } from "../../core/topology/slots.js";
import { parseClusterNodes } from "../../core/topology/cluster-nodes-parser.js";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { bundleLoadScript } from "../../core/drill/load-bundle.js";
import { parseRecordLines, WRITING_LINE, type LoadOutput } from "../../core/drill/record-lines.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import type { DrillTarget } from "../../core/drill/target.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { readBackKeys } from "../../components/steps/failure-drill/read-back.js";
import { toCheckReport } from "../../core/verify/to-check-report.js";
import { startTestCluster, startTestReplication } from "../harness/drill-faults.js";
import { runNodeBundle } from "../support/processes.js";

const PASSWORD = "bundle-test-password-7f3a";
const RATE = 40;
const LOAD_S = 3;
let dir: string;
let script: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "drill-bundle-"));
  script = join(dir, "load.mjs");
  writeFileSync(script, await bundleLoadScript());
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs load.mjs to its end (`sigtermAfterMs`: sends it SIGTERM then, as a test stops the load early). */
const runLoad = (env: Record<string, string>, sigtermAfterMs?: number) => runNodeBundle(script, env, sigtermAfterMs);

function common(prefix: string): Record<string, string> {
  return {
    DRILL_RATE: String(RATE),
    DRILL_LOAD_S: String(LOAD_S),
    DRILL_KEY_PREFIX: prefix,
    VALKEY_PASSWORD: PASSWORD,
    NODE_NO_WARNINGS: "1",
  };
}

async function expectMeasuredAndStored(out: LoadOutput, target: DrillTarget, prefix: string): Promise<void> {
  expect(out.prefix).toBe(prefix);
  expect(out.loadStop - out.loadStart).toBeGreaterThanOrEqual(LOAD_S * 1000 - 50);
  for (const stream of out.streams) {
    const rs = out.records.filter((r) => r.stream === stream);
    // A fixed-rate sender: one write every 1/RATE s from loadStart to loadStop (the load runs LOAD_S after every
    // stream's first acknowledgement, so longer on a loaded machine), never more; at least half of them sent.
    const promised = Math.floor((RATE * (out.loadStop - out.loadStart)) / 1000) + 1;
    expect(rs.length, stream).toBeGreaterThanOrEqual(RATE * LOAD_S * 0.5);
    expect(rs.length, `${stream}: at most ${promised} in ${out.loadStop - out.loadStart} ms`).toBeLessThanOrEqual(
      promised + 1,
    );
    const acked = rs.filter((r) => r.ok);
    expect(acked.length / rs.length, `${stream}: acknowledged share`).toBeGreaterThan(0.9);
    // Each has a replica: WAIT 1 confirms the WAIT writer's writes; the no-WAIT writer's are never confirmed.
    if (parseStreamName(stream).writer === "wait")
      expect(acked.filter((r) => r.waited).length, `${stream}: WAIT-confirmed`).toBeGreaterThan(acked.length * 0.5);
    else expect(acked.filter((r) => r.waited).length, `${stream}: no WAIT`).toBe(0);
    for (const r of acked) {
      // `<prefix>:<stream>:<n>`, with the shard's hash tag after the prefix on a per-shard stream.
      expect(r.key.replace(/^([^{]*)\{[^}]+\}:/, "$1").startsWith(`${prefix}:${stream}:`), r.key).toBe(true);
      expect(r.doneAt).toBeGreaterThan(r.sentAt);
      expect(r.doneAt - r.sentAt).toBeLessThan(1000);
    }
    expect(new Set(rs.map((r) => r.key)).size).toBe(rs.length);
  }
  const keys = out.records.filter((r) => r.ok).map((r) => r.key);
  const back = await target.readBack(keys);
  const missing = out.records.filter((r) => r.ok && back.get(r.key) !== r.value);
  expect(missing.map((r) => r.key)).toEqual([]);
  // The step's read-back (through a connector, to the primaries of the verifier's report) finds the same.
  const connector = new DirectConnector({ password: PASSWORD });
  try {
    const step = await readBackKeys(
      [...keys, `${prefix}:never-written`],
      toCheckReport(await target.verify()),
      connector,
    );
    expect(out.records.filter((r) => r.ok && step.get(r.key) !== r.value).map((r) => r.key)).toEqual([]);
    expect(step.get(`${prefix}:never-written`)).toBeUndefined();
    expect(step.size).toBe(keys.length + 1);
  } finally {
    await connector.close();
  }
}

describe("load.mjs (the bundled in-cluster load) against real local topologies", () => {
  let replication: ReplicationTarget | undefined;
  afterAll(async () => replication?.stop());

  it("replication: two client paths (Sentinel-aware, write endpoint), each a no-WAIT and a WAIT writer, measured, parsed back, every acked key stored and read back by the step's readBackKeys; the password never printed", async () => {
    replication = await startTestReplication(PASSWORD);
    const s = replication.t.sentinelEndpoints[0]!;
    const w = replication.t.proxy!.write;
    const prefix = "drill:bundle1:primary";
    const run = await runLoad({
      ...common(prefix),
      DRILL_MODE: "replication",
      DRILL_TARGET_HOST: w.host,
      DRILL_TARGET_PORT: String(w.port),
      DRILL_SENTINEL_HOST: s.host,
      DRILL_SENTINEL_PORT: String(s.port),
      DRILL_MASTER_NAME: replication.t.masterName,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(PASSWORD);
    // The drill's cue for its fault comes first: every stream had an acknowledgement.
    expect(run.stdout.split("\n")[0]).toBe(WRITING_LINE);
    const out = parseRecordLines(run.stdout);
    expect(out.streams).toEqual(["sentinel-client", "sentinel-client+wait", "write-endpoint", "write-endpoint+wait"]);
    await expectMeasuredAndStored(out, replication, prefix);
  }, 120_000);

  let cluster: ClusterTarget | undefined;
  afterAll(async () => cluster?.stop());

  it("cluster: a no-WAIT and a WAIT writer per shard (hash-tagged keys in its slots; the WAIT writer on its slot's primary), measured, parsed back, every acknowledgement naming its slot's primary, every acked key stored and read back by the step's readBackKeys (MOVED from the other primaries)", async () => {
    cluster = await startTestCluster(PASSWORD, 170);
    const seed = cluster.pods[0]!;
    const prefix = "drill:bundle2:replica";
    const run = await runLoad({
      ...common(prefix),
      DRILL_MODE: "cluster",
      DRILL_TARGET_HOST: seed.host,
      DRILL_TARGET_PORT: String(seed.port),
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe(WRITING_LINE);
    const out = parseRecordLines(run.stdout);
    // Per shard (its slot ranges, as the cluster was split), a no-WAIT and a WAIT writer.
    const shards = splitSlots(3).map((r) => shardLabel([r]));
    expect([...out.streams].sort()).toEqual(
      shards.flatMap((sh) => [`cluster-client@${sh}`, `cluster-client+wait@${sh}`]).sort(),
    );
    await expectMeasuredAndStored(out, cluster, prefix);
    // Every stream's keys hash to a slot of its own shard (the server's CLUSTER KEYSLOT), and every
    // acknowledgement of either writer names the node that gave it: the slot's primary, as the
    // server's CLUSTER NODES has it (the no-WAIT writer by the client's slot table, the WAIT writer
    // by its plain connection's socket; both IP:PORT here, `cluster-preferred-endpoint-type ip`).
    const probe = new Redis({ host: seed.host, port: seed.port, password: PASSWORD });
    try {
      const { nodes } = parseClusterNodes(String(await probe.call("CLUSTER", "NODES")));
      for (const stream of out.streams) {
        const [range] = labelRanges(parseStreamName(stream).shard ?? "");
        const key = out.records.find((r) => r.stream === stream && r.ok)?.key ?? "";
        const slot = Number(await probe.call("CLUSTER", "KEYSLOT", key));
        expect(slot >= (range?.start ?? -1) && slot <= (range?.end ?? -1), `${stream}: ${key} in slot ${slot}`).toBe(
          true,
        );
        const owner = nodes.find(
          (n) => n.role === "primary" && n.slots.some((r) => slot >= r.start && slot <= r.end),
        )?.endpoint;
        const ackedBy = new Set(out.records.filter((r) => r.stream === stream && r.ok).map((r) => r.node));
        expect([...ackedBy], stream).toEqual([owner === undefined ? "no owner" : `${owner.host}:${owner.port}`]);
      }
    } finally {
      probe.disconnect();
    }
  }, 120_000);

  it("stops at SIGTERM long before DRILL_LOAD_S and still prints its records (a test's load around a `pulumi up`)", async () => {
    const seed = cluster!.pods[0]!;
    const prefix = "drill:bundle3:upgrade";
    const run = await runLoad(
      {
        ...common(prefix),
        DRILL_LOAD_S: "600",
        DRILL_MODE: "cluster",
        DRILL_TARGET_HOST: seed.host,
        DRILL_TARGET_PORT: String(seed.port),
      },
      3000,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = parseRecordLines(run.stdout);
    expect(out.loadStop - out.loadStart).toBeLessThan(30_000);
    expect(out.records.filter((r) => r.ok).length).toBeGreaterThan(10);
  }, 120_000);

  it("exits 1 naming the bad variable, and prints no records", async () => {
    const run = await runLoad({
      ...common("p"),
      DRILL_MODE: "cluster",
      DRILL_TARGET_HOST: "127.0.0.1",
      DRILL_TARGET_PORT: "http",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("DRILL_TARGET_PORT must be a whole number");
    expect(run.stdout).toBe("");
  }, 30_000);
});
