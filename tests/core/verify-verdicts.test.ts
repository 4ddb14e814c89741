/**
 * Verdicts instead of confusing errors, against real processes through the real CLI:
 * - `verify --sentinel` with the primary the Sentinels name killed: exit 1, PRIMARY_UNREACHABLE
 *   (JSON with --json), the Sentinels still reported;
 * - a primary with zero replicas fails NO_REPLICAS unless `--expect-replicas 0`;
 * - a non-Valkey listener (an HTTP server, a TCP echo service) given as seed or target is named
 *   as such (exit 2, NOT_VALKEY), not a stream or timeout error;
 * - cluster mode against a server with cluster mode off: CLUSTER_MODE_DISABLED (verify exit 1,
 *   bench --cluster exit 2);
 * - `bench --cluster` against a half-formed cluster (3 nodes met, slots on two: cluster_state:fail)
 *   fails within seconds with CLUSTER_NOT_READY instead of hanging (the benchmark client waited
 *   for as long as it was let run).
 */
import { createServer as createHttpServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, openClient } from "../../core/topology/connector.js";
import { PROBE_TIMEOUT_MS } from "../../core/topology/protocol-probe.js";
import { pollUntil } from "../../core/util/poll-until.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { failureCodes, runVbench } from "../support/verify-helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-verdicts-"));
const fleet = new LocalFleet();
let lone: ValkeyProcess;
let halfFormed: ValkeyProcess;
const listeners: Server[] = [];
let httpAddress = "";
let echoAddress = "";

function listen(server: Server): Promise<string> {
  listeners.push(server);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve(`127.0.0.1:${typeof a === "object" && a !== null ? a.port : 0}`);
    }),
  );
}

beforeAll(async () => {
  let nodes: ValkeyProcess[];
  [lone, ...nodes] = await Promise.all([
    fleet.start({ name: "lone-primary" }),
    ...[0, 1, 2].map((i) => fleet.start({ name: `half-formed-${i}`, clusterEnabled: true })),
  ]);
  // Three nodes met, slots assigned on two of them only: cluster_state:fail, 5461 slots unassigned
  // (redis-benchmark --cluster waited on this for as long as it was let run).
  halfFormed = nodes[0]!;
  const clients = await Promise.all(nodes.map((n) => openClient(n.host, n.port, n.address, {})));
  try {
    for (const c of clients.slice(1))
      await c.call("CLUSTER", "MEET", halfFormed.host, String(halfFormed.port), String(halfFormed.clusterPort));
    await clients[0]!.call("CLUSTER", "ADDSLOTSRANGE", "0", "5460");
    await clients[1]!.call("CLUSTER", "ADDSLOTSRANGE", "5461", "10922");
    await pollUntil(
      async () => {
        const info = String(await clients[0]!.call("CLUSTER", "INFO"));
        return /cluster_known_nodes:3/.test(info) && /cluster_slots_assigned:10923/.test(info)
          ? true
          : info.split("\n").slice(0, 6).join(" ");
      },
      { timeoutMs: 20_000, intervalMs: 200, what: "the half-formed cluster to know 3 nodes and 10923 slots" },
    );
  } finally {
    for (const c of clients) c.disconnect();
  }
  httpAddress = await listen(createHttpServer((_req, res) => res.end("hello")));
  echoAddress = await listen(createServer((socket) => socket.pipe(socket)));
}, 60_000);
afterAll(async () => {
  for (const l of listeners) l.close();
  await fleet.stopAll();
  rmSync(scratch, { recursive: true, force: true });
});

const report = (stdout: string): TopologyReport => JSON.parse(stdout) as TopologyReport;
const jsonError = (stdout: string) =>
  (JSON.parse(stdout) as { ok: boolean; error: { code: string; message: string; exitCode: number } }).error;
const bench = (...args: string[]) =>
  runVbench(["bench", ...args, "--requests", "200", "--tests", "set", "--output", scratch, "--json"], {}, 30_000);

describe("verify: a primary with no replica", () => {
  it("fails NO_REPLICAS (exit 1) unless --expect-replicas 0", async () => {
    const [plain, accepted] = await Promise.all([
      runVbench(["verify", "--mode", "replication", "--seed", lone.address, "--json"]),
      runVbench(["verify", "--mode", "replication", "--seed", lone.address, "--expect-replicas", "0", "--json"]),
    ]);
    expect(plain.code, plain.stderr).toBe(1);
    expect(failureCodes(report(plain.stdout))).toEqual(["NO_REPLICAS"]);
    expect(report(plain.stdout).failures[0]!.message).toContain(`the primary ${lone.address} has no replica`);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(report(accepted.stdout).ok).toBe(true);
  }, 30_000);
});

describe("a listener that is not Valkey", () => {
  it("is named as such by verify and bench: exit 2, NOT_VALKEY, the first line it answered", async () => {
    const [http, echo, benchHttp] = await Promise.all([
      runVbench(["verify", "--mode", "replication", "--seed", httpAddress, "--json"], {}, 30_000),
      runVbench(["verify", "--mode", "cluster", "--seed", echoAddress, "--json"], {}, 30_000),
      bench("--target", httpAddress),
    ]);
    for (const [run, address, answered] of [
      [http, httpAddress, "HTTP/1.1 400 Bad Request"],
      [echo, echoAddress, "PING"],
      [benchHttp, httpAddress, "HTTP/1.1 400 Bad Request"],
    ] as const) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${address} is not a Valkey/Redis server: it answered '${answered}'`);
      expect(jsonError(run.stdout)).toMatchObject({ code: "NOT_VALKEY", exitCode: 2 });
    }
  }, 60_000);
});

describe("cluster mode against servers that are not (yet) a working cluster", () => {
  it("verify --mode cluster on a server with cluster mode off: CLUSTER_MODE_DISABLED, exit 1", async () => {
    const run = await runVbench(["verify", "--mode", "cluster", "--seed", lone.address, "--json"]);
    expect(run.code, run.stderr).toBe(1);
    const r = report(run.stdout);
    expect(failureCodes(r)).toEqual(["CLUSTER_MODE_DISABLED"]);
    expect(r.failures[0]!.message).toContain("cluster mode off");
  }, 30_000);

  it("bench --cluster on a server with cluster mode off: exit 2, CLUSTER_MODE_DISABLED, in seconds", async () => {
    const t0 = Date.now();
    const run = await bench("--target", lone.address, "--cluster");
    expect(run.code, run.stderr).toBe(2);
    expect(jsonError(run.stdout)).toMatchObject({ code: "CLUSTER_MODE_DISABLED", exitCode: 2 });
    expect(run.stderr).toContain("cluster mode off");
    expect(Date.now() - t0).toBeLessThan(20_000);
  }, 40_000);

  it("bench --cluster on a half-formed cluster (3 nodes, cluster_state:fail, 5461 slots unassigned): exit 1, CLUSTER_NOT_READY, in seconds", async () => {
    const t0 = Date.now();
    const run = await bench("--target", halfFormed.address, "--cluster");
    expect(run.code, run.stderr).toBe(1);
    const e = jsonError(run.stdout);
    expect(e).toMatchObject({ code: "CLUSTER_NOT_READY", exitCode: 1 });
    expect(e.message).toContain("SLOTS_UNASSIGNED");
    expect(e.message).toContain("CLUSTER_STATE_NOT_OK");
    expect(Date.now() - t0).toBeLessThan(20_000);
  }, 40_000);
});

describe("verify --sentinel with the primary unreachable", () => {
  let t: SentinelTopology;
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  beforeAll(async () => {
    // down-after far beyond the test: the Sentinels keep naming the dead primary.
    t = await SentinelTopology.start({
      replicas: 1,
      zones: ["a", "b", "c"],
      password,
      downAfterMs: 60_000,
      failoverTimeoutMs: 120_000,
      proxy: false,
    });
  }, 120_000);
  afterAll(async () => t?.stopAll());

  const sentinelArgs = () => [
    "verify",
    "--mode",
    "replication",
    "--sentinel",
    t.sentinels.map((s) => s.address).join(","),
    "--password-env",
    "VERDICT_PW",
    "--json",
  ];

  it("a frozen primary (SIGSTOP): exit 1, PRIMARY_UNREACHABLE naming the missing PING reply, within seconds", async () => {
    const primary = t.members[0]!;
    primary.proc!.signal("SIGSTOP");
    try {
      // The CLI's own start (tsx, imports) on this machine now, timed by a run that does nothing else.
      const s0 = Date.now();
      expect((await runVbench(["verify", "--help"], {}, 30_000)).code).toBe(0);
      const startupMs = Date.now() - s0;
      const t0 = Date.now();
      const run = await runVbench(sentinelArgs(), { VERDICT_PW: password }, 30_000);
      expect(run.code, run.stderr).toBe(1);
      const f = report(run.stdout).failures.find((x) => x.code === "PRIMARY_UNREACHABLE");
      expect(f?.message).toContain("no reply to PING");
      // Beyond the start: the frozen primary costs one command timeout (its AUTH; the kernel accepts the connect)
      // and the protocol probe after it, plus 5 s for the Sentinels, which answer at once; the Sentinels'
      // down-after (60 s) is never waited for.
      const boundMs = DEFAULT_COMMAND_TIMEOUT_MS + PROBE_TIMEOUT_MS + 5_000;
      const beyondMs = Date.now() - t0 - startupMs;
      console.log(`[verify] frozen primary: ${beyondMs} ms beyond a ${startupMs} ms start (bound ${boundMs} ms)`);
      expect(beyondMs, `startup ${startupMs} ms`).toBeLessThan(boundMs);
    } finally {
      primary.proc!.signal("SIGCONT");
    }
  }, 40_000);

  it("exit 1 with PRIMARY_UNREACHABLE (JSON with --json, table without), the Sentinels still reported", async () => {
    const primary = t.members[0]!;
    await killHard(primary.proc);
    const args = [
      "verify",
      "--mode",
      "replication",
      "--sentinel",
      t.sentinels.map((s) => s.address).join(","),
      "--password-env",
      "VERDICT_PW",
    ];
    const env = { VERDICT_PW: password };
    const [json, text] = await Promise.all([runVbench([...args, "--json"], env, 30_000), runVbench(args, env, 30_000)]);
    expect(json.code, json.stderr).toBe(1);
    const r = report(json.stdout);
    expect(r.failures.map((f) => f.code)).toContain("PRIMARY_UNREACHABLE");
    const f = r.failures.find((x) => x.code === "PRIMARY_UNREACHABLE")!;
    expect(f.node).toBe(primary.address);
    expect(f.message).toContain(`the primary the Sentinels name, ${primary.address}, cannot be reached`);
    expect(r.sentinels?.map((s) => [s.address, s.reachable, s.primary])).toEqual(
      t.sentinels.map((s) => [s.address, true, primary.address]),
    );
    expect(json.stderr).toBe("vbench: topology verification failed: PRIMARY_UNREACHABLE\n");
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toContain("PRIMARY_UNREACHABLE");
    expect(text.stdout).not.toContain(password);
  }, 60_000);
});
