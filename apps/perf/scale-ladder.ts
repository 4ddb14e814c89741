/**
 * npm run bench:scale -- [--primaries 3,10,30,100] [--replicas-per-primary 1] [--node-timeout-ms N]
 *                         [--ping-interval-ms N] [--repeat N] [--json FILE] [--steps] [--reshard-up-to P]
 *
 * How this tool's cluster steps grow with the cluster (issue 36), on real valkey-server processes (cluster-enabled,
 * maxmemory 32mb each, three named zones round-robin, cluster-node-timeout the stack's default 15000 ms or
 * --node-timeout-ms: the cluster bus pings every peer each half timeout, N² pings, so at 200 nodes on 2 cores a
 * 2000 ms timeout kept most primaries PFAIL, load average 184). For each size, in one run:
 *   start      the processes, answering PING (the machine's cost, not the tool's: shown, not judged);
 *   bootstrap  the AZ-aware planner and executor (core/bootstrap) from empty processes to cluster_state:ok on
 *              every node with every replica linked (bootstrapCluster's own wait);
 *   verify     verifyTopology of the live cluster (median of 3 runs);
 *   failover   ceil(P / 10) primaries SIGKILLed at once (every tenth shard): until each affected shard's
 *              replica takes a SET of a key in that shard's slots; meanwhile one writer per affected shard
 *              (SETs one after the other on its primary, no WAIT, as an application) and, after, its
 *              acknowledged (OK) writes the new primary lacks: the loss per shard, with how long before
 *              the kill the oldest lost one was acknowledged (the async replication window).
 *   scaleOut   on a cluster of its own holding 4 MB per primary, P → 2P with the project's scale-up (P × (1 + r)
 *   scaleIn    fresh processes; slots with their keys, atomic slot migration on Valkey 9) and back (scaleIn), while
 *              one writer (the drills' WriteStream, no WAIT) writes across every slot: the data moved counted two
 *              ways, the writer's longest pause and its acknowledged writes lost (scale-reshard.ts); only up to
 *              --reshard-up-to primaries (default 30: at 100, 400 processes' bus exhausted this kernel's TCP memory);
 *   heal       a second cluster of the same shape run as pods run it (start.sh, heal.sh at their deployed
 *              clocks), every member SIGKILLed and started again at once on a NEW address, the addresses left
 *              dropped by iptables as a deleted pod's IP answers nothing (as root; refused otherwise, which the
 *              row says): from the restart until the verifier passes, and the keys confirmed on disk before
 *              (WAITAOF) that did not read back (scale-heal.ts).
 * --ping-interval-ms N sets Valkey's hidden cluster-ping-interval on the failover's processes (default: half the
 * node timeout, cluster_legacy.c clusterCron): a failure becomes FAIL only when a majority of primaries' reports
 * reach a primary, and they travel only in pings, so the failover waits up to this interval past the node
 * timeout; an experiment, not a stack key (docs/measurements.md). --repeat N runs each size N times: each step's
 * median, its range beside it, the goals against the medians. --json FILE writes the rungs
 * (benchmarks/scale/ladder-file.ts); as <dir>/scale-ladder.json, `vbench report --from <dir>` draws them ("Cost as
 * the cluster grows"). --steps prints the bootstrap's steps with their times on stderr. Prints a table, then per
 * step the exponent k (time ∝ P^k) between neighbouring sizes and fitted over all, and the issue's goals against the
 * largest size measured. The Pulumi program at these shapes: `npm run bench:program -- --primaries …` (mocks) and
 * tests/e2e/program-up-scale.test.ts (opt-in: `up` on the e2e API server).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import type { Redis } from "ioredis";
import { bootstrapCluster } from "../../core/bootstrap/cluster-bootstrap.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { roundRobinZones, StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { localMember } from "../../harness/local/local-cluster.js";
import { LocalFleet, type StartOptions, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { wholeFlag } from "./perf-args.js";
import { alignedLines } from "../../benchmarks/run/text-table.js";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { captureMachine } from "../../benchmarks/run/machine.js";
import { failover } from "./scale-failover.js";
import { healAfterFullRestart } from "./scale-heal.js";
import { reshardStep } from "./scale-reshard.js";
import {
  fittedExponent,
  neighbourExponents,
  parsePrimaryLadder,
  spreadOf,
  type LadderPoint,
} from "../../benchmarks/scale/scale-fit.js";
import {
  LADDER_STEPS,
  ladderFileSchema,
  type LadderRung,
  type LadderStep,
} from "../../benchmarks/scale/ladder-file.js";

const ZONES = ["zone-a", "zone-b", "zone-c"];
/** The stack's default cluster-node-timeout (config valkey.cluster.nodeTimeoutMs). */
const DEFAULT_NODE_TIMEOUT_MS = 15_000;
/** The heal's members from loopback address 1000 (127.0.3.232) on, away from every test's 127.0.0.x. */
const HEAL_HOST_BASE = 1000;
const STEPS = LADDER_STEPS;
type Step = LadderStep;
type Rung = LadderRung;

const seconds = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

/** The flags (node:util parseArgs: an unknown flag or a missing value is an error naming it). */
function flags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      "primaries": { type: "string" },
      "replicas-per-primary": { type: "string" },
      "node-timeout-ms": { type: "string" },
      "ping-interval-ms": { type: "string" },
      "repeat": { type: "string" },
      "json": { type: "string" },
      "steps": { type: "boolean" },
      "reshard-up-to": { type: "string" },
    },
  }).values;
}

/** verifyTopology of the live cluster, three runs: the median's ms. */
async function verifyMedian(seed: ValkeyProcess, zoneMap: Record<string, string>, expect: Expect): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = await verifyTopology({
      mode: "cluster",
      seeds: [seed],
      connector: new DirectConnector(),
      zones: new StaticZoneSource(zoneMap),
      expect,
    });
    runs.push(performance.now() - t);
    if (!r.ok) throw new Error(`verify at ${expect.primaries} primaries: ${JSON.stringify(r.failures.slice(0, 3))}`);
  }
  return spreadOf(runs).median;
}

type Expect = { primaries: number; replicasPerPrimary: number };
/**
 * The largest size whose P → 2P → P runs by default: at 100 primaries it needs 400 processes in one cluster, whose bus
 * is a full mesh of about 320,000 loopback TCP sockets; on this machine that exhausted the kernel's tcp_mem ("TCP: out
 * of memory", 346,113 sockets in use) and the step did not finish (2026-11-30). On EKS each member has its own kernel.
 */
const DEFAULT_RESHARD_UP_TO = 30;

interface LadderOptions {
  /** Sizes above this skip P → 2P → P (their rung has no `reshard`). */
  reshardUpTo: number;
  replicas: number;
  nodeTimeoutMs: number;
  /** cluster-ping-interval on the failover's processes; undefined: Valkey's default (node timeout / 2). */
  pingIntervalMs: number | undefined;
  steps: boolean;
}

/** Every plain process of the ladder: cluster-enabled, maxmemory 32mb, the ladder's node timeout and ping interval. */
function nodeOptions(o: LadderOptions, prefix: string): (i: number) => StartOptions {
  return (i) => ({
    name: `${prefix}-${i + 1}`,
    clusterEnabled: true,
    clusterNodeTimeoutMs: o.nodeTimeoutMs,
    extra: {
      maxmemory: "32mb",
      ...(o.pingIntervalMs === undefined ? {} : { "cluster-ping-interval": String(o.pingIntervalMs) }),
    },
  });
}

/** Start, bootstrap, verify and failover of one size on plain processes (every process stopped after). */
async function measureFleet(primaries: number, o: LadderOptions): Promise<Omit<Rung, "heal" | "reshard">> {
  const replicas = o.replicas;
  const fleet = new LocalFleet();
  const count = primaries * (1 + replicas);
  const clients: Redis[] = [];
  try {
    let t = performance.now();
    const nodes = await fleet.startMany(count, nodeOptions(o, "scale"));
    const start = performance.now() - t;
    const zoneMap = roundRobinZones(nodes, ZONES);
    t = performance.now();
    const boot = await bootstrapCluster({
      members: nodes.map((n) => localMember(n, zoneMap[n.address] as string)),
      primaries,
      replicasPerPrimary: replicas,
      connector: new DirectConnector(),
      timeoutMs: 300_000,
      ...(o.steps ? { onStep: (x: string) => console.error(`  +${seconds(performance.now() - t)} s ${x}`) } : {}),
    });
    const bootstrap = performance.now() - t;
    if (boot.plan === undefined) throw new Error("fresh processes were reported as a formed cluster");
    const verify = await verifyMedian(nodes[0] as ValkeyProcess, zoneMap, { primaries, replicasPerPrimary: replicas });
    const f = await failover({ ...boot, plan: boot.plan }, new Map(nodes.map((n) => [n.address, n])), clients);
    return {
      primaries,
      nodes: count,
      killed: f.killed,
      ms: { start, bootstrap, verify, failover: f.ms, scaleOut: 0, scaleIn: 0, heal: 0 },
      writes: f.writes,
    };
  } finally {
    for (const c of clients) c.disconnect();
    await fleet.stopAll();
  }
}

/**
 * Every step of one size: the plain processes' steps, P → 2P → P on a cluster of its own (scale-reshard.ts), then the
 * heal on pods' files (scale-heal.ts).
 */
async function measure(primaries: number, o: LadderOptions): Promise<Rung> {
  const rung = await measureFleet(primaries, o);
  const resharded =
    primaries > o.reshardUpTo
      ? undefined
      : await reshardStep({
          primaries,
          replicas: o.replicas,
          zones: ZONES,
          startOptions: nodeOptions(o, "reshard"),
          ...(o.steps
            ? { onScaleInStep: (at: number, x: string) => console.error(`  scale-in +${seconds(at)} s ${x}`) }
            : {}),
        });
  const { outMs = 0, inMs = 0, ...reshard } = resharded ?? {};
  if (o.steps && resharded !== undefined)
    console.error(
      `  reshard: out ${seconds(outMs)} s (moving ${seconds(resharded.outMoveMs)} s), in ${seconds(inMs)} s, writer's longest pause ${resharded.writer.longestPauseMs} ms`,
    );
  const h = await healAfterFullRestart({
    primaries,
    replicas: o.replicas,
    zones: ZONES,
    nodeTimeoutMs: o.nodeTimeoutMs,
    hostBase: HEAL_HOST_BASE,
  });
  if (o.steps)
    console.error(
      `  heal: every member answering PING ${seconds(h.restartMs)} s after the restart (the last one's own log: ready ${h.readyMs === undefined ? "unknown" : `${seconds(h.readyMs)} s`}); the addresses left ${h.leftAddresses}`,
    );
  return {
    ...rung,
    ms: { ...rung.ms, scaleOut: outMs, scaleIn: inMs, heal: h.healMs },
    heal: {
      restartMs: h.restartMs,
      scriptsMs: h.scriptsMs,
      keys: h.keys,
      missing: h.lost + h.unknown,
      leftAddresses: h.leftAddresses,
    },
    ...(resharded === undefined ? {} : { reshard: reshard as Required<Rung>["reshard"] }),
  };
}

/** Repeated runs of one size as one rung: each step's median time, every sample kept, the writes summed. */
function combine(runs: readonly Rung[]): Rung {
  const first = runs[0] as Rung;
  if (runs.length === 1) return first;
  const samples = Object.fromEntries(STEPS.map((s) => [s, runs.map((r) => r.ms[s])])) as Record<Step, number[]>;
  const ms = Object.fromEntries(STEPS.map((s) => [s, spreadOf(samples[s]).median])) as Record<Step, number>;
  const lostPerShard: Record<string, number> = {};
  for (const r of runs)
    for (const [shard, n] of Object.entries(r.writes.lostPerShard))
      lostPerShard[shard] = (lostPerShard[shard] ?? 0) + n;
  const oldest = runs.map((r) => r.writes.oldestLostMsBeforeKill).filter((x): x is number => x !== null);
  return {
    ...first,
    ms,
    samples,
    writes: {
      acked: runs.reduce((a, r) => a + r.writes.acked, 0),
      lost: runs.reduce((a, r) => a + r.writes.lost, 0),
      lostPerShard,
      oldestLostMsBeforeKill: oldest.length === 0 ? null : Math.max(...oldest),
    },
    heal: {
      restartMs: spreadOf(runs.map((r) => r.heal.restartMs)).median,
      scriptsMs: spreadOf(runs.map((r) => r.heal.scriptsMs)).median,
      keys: runs.reduce((a, r) => a + r.heal.keys, 0),
      missing: runs.reduce((a, r) => a + r.heal.missing, 0),
      ...(first.heal.leftAddresses === undefined ? {} : { leftAddresses: first.heal.leftAddresses }),
    },
    ...(first.reshard === undefined ? {} : { reshard: combineReshard(runs.map((r) => r.reshard as Reshard)) }),
  };
}

/** Repeated reshards: the moving times' medians, the first run's data, counts summed, the longest pause of all. */
type Reshard = Required<Rung>["reshard"];
function combineReshard(xs: readonly Reshard[]): Reshard {
  const median = (f: (x: Reshard) => number): number => spreadOf(xs.map(f)).median;
  const total = (f: (x: Reshard) => number): number => xs.reduce((a, x) => a + f(x), 0);
  const first = xs[0] as Reshard;
  return {
    ...first,
    outMoveMs: median((x) => x.outMoveMs),
    inMoveMs: median((x) => x.inMoveMs),
    writer: {
      acked: total((x) => x.writer.acked),
      lost: total((x) => x.writer.lost),
      failed: total((x) => x.writer.failed),
      unexpected: total((x) => x.writer.unexpected),
      longestPauseMs: Math.max(...xs.map((x) => x.writer.longestPauseMs)),
      failures: [...new Set(xs.flatMap((x) => x.writer.failures))].slice(0, 5),
    },
    dataMissing: total((x) => x.dataMissing),
  };
}

/** A step's time for the table: its median, and the range over the runs when repeated. */
function cell(r: Rung, step: Step, fmt: (ms: number) => string): string {
  const s = r.samples?.[step];
  if (s === undefined) return fmt(r.ms[step]);
  const { min, max } = spreadOf(s);
  return `${fmt(r.ms[step])} (${fmt(min)}–${fmt(max)})`;
}

const HEADER = [
  "primaries",
  "nodes",
  "killed",
  "start s",
  "bootstrap s",
  "verify ms",
  "failover s",
  "acked",
  "lost (per shard; oldest)",
  "scale-out s",
  "scale-in s",
  "heal s",
  "of it: all started s",
  "every heal.sh done s",
  "heal keys missing",
];

const RESHARD_HEADER = [
  "primaries",
  "moved out MB (server's MB)",
  "moving s",
  "MB/s",
  "keys back (server's MB)",
  "moving s",
  "writer: longest pause ms",
  "acked",
  "lost",
  "failed",
  "data missing",
];
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

function reshardCells(r: Rung): string[] {
  const x = r.reshard;
  if (x === undefined)
    return [String(r.primaries), "not run (above --reshard-up-to)", ...RESHARD_HEADER.slice(2).map(() => "")];
  return [
    String(r.primaries),
    `${mb(x.bytesMoved)} (${mb(x.serverBytesIn)})`,
    seconds(x.outMoveMs),
    x.outMoveMs > 0 ? (x.bytesMoved / 2 ** 20 / (x.outMoveMs / 1000)).toFixed(1) : "—",
    `${x.keysMovedBack} (${mb(x.serverBytesBack)})`,
    seconds(x.inMoveMs),
    String(x.writer.longestPauseMs),
    String(x.writer.acked),
    String(x.writer.lost),
    String(x.writer.failed + x.writer.unexpected),
    String(x.dataMissing),
  ];
}

function report(rungs: readonly Rung[]): void {
  const body = rungs.map((r) => {
    const w = r.writes;
    const per = Object.values(w.lostPerShard).join("/");
    const oldest = w.oldestLostMsBeforeKill === null ? "" : `; ${w.oldestLostMsBeforeKill} ms before the kill`;
    return [
      String(r.primaries),
      String(r.nodes),
      String(r.killed),
      cell(r, "start", seconds),
      cell(r, "bootstrap", seconds),
      cell(r, "verify", (x) => x.toFixed(0)),
      cell(r, "failover", seconds),
      String(w.acked),
      `${w.lost} (${per}${oldest})`,
      cell(r, "scaleOut", seconds),
      cell(r, "scaleIn", seconds),
      cell(r, "heal", seconds),
      seconds(r.heal.restartMs),
      seconds(r.heal.scriptsMs),
      `${r.heal.missing} of ${r.heal.keys}`,
    ];
  });
  for (const line of alignedLines(HEADER, body, 0)) console.log(line);
  console.log("\nP → 2P → P with data, one writer across every slot (no WAIT):");
  for (const line of alignedLines(RESHARD_HEADER, rungs.map(reshardCells), 0)) console.log(line);
  for (const r of rungs)
    if (r.reshard !== undefined && r.reshard.writer.failures.length > 0)
      console.log(`  ${r.primaries} primaries, the writer's failed writes: ${r.reshard.writer.failures.join(" | ")}`);
  if (rungs.length < 2) return;
  console.log("\nexponent k (time ∝ P^k): between neighbouring sizes; fitted over all");
  for (const step of STEPS) {
    const points: LadderPoint[] = rungs.map((r) => ({ primaries: r.primaries, ms: r.ms[step] }));
    const pairs = neighbourExponents(points);
    console.log(`  ${step.padEnd(9)} ${pairs.join("  ")}  fitted: ${fittedExponent(points).toFixed(2)}`);
  }
}

/** The issue's goals on this machine, against the largest size measured (a goal's size not reached: said so). */
function goals(rungs: readonly Rung[], nodeTimeoutMs: number): boolean {
  const top = rungs[rungs.length - 1] as Rung;
  const lines: [string, number, number, boolean][] = [
    [
      `bootstrap of ${top.primaries} primaries (goal: 100 primaries ≤ 60 s)`,
      top.ms.bootstrap,
      60_000,
      top.primaries >= 100,
    ],
    [`verify of ${top.nodes} live nodes (goal: 200 nodes ≤ 1 s)`, top.ms.verify, 1000, top.nodes >= 200],
    [
      `failover of ${top.killed} killed primaries (goal: 10 at once ≤ node timeout ${nodeTimeoutMs} ms + 5 s)`,
      top.ms.failover,
      nodeTimeoutMs + 5000,
      top.killed >= 10,
    ],
    [
      `heal of ${top.nodes} nodes after a full restart (goal: 200 nodes ≤ 120 s)`,
      top.ms.heal,
      120_000,
      top.nodes >= 200,
    ],
  ];
  let ok = true;
  console.log("");
  for (const [what, ms, bar, atSize] of lines) {
    const pass = ms <= bar;
    ok &&= pass;
    console.log(
      `${what}: ${seconds(ms)} s vs bar ${seconds(bar)} s → ${(ms / bar).toFixed(2)}x of bar ${pass ? "PASS" : "FAIL"}${atSize ? "" : " (below the goal's size)"}`,
    );
  }
  // Keys on disk on a primary and a replica before the full restart: any one missing after the heal is a loss.
  const missing = rungs.reduce((a, r) => a + r.heal.missing, 0);
  const keys = rungs.reduce((a, r) => a + r.heal.keys, 0);
  console.log(
    `keys confirmed on disk (WAITAOF 1 1) before the full restarts, missing after: ${missing} of ${keys} ${missing === 0 ? "PASS" : "FAIL"}`,
  );
  // The resharding's writer (no WAIT) and the preloaded data: any acknowledged write or key missing is a loss.
  const lostWrites = rungs.reduce((a, r) => a + (r.reshard?.writer.lost ?? 0), 0);
  const dataMissing = rungs.reduce((a, r) => a + (r.reshard?.dataMissing ?? 0), 0);
  const resharded = lostWrites === 0 && dataMissing === 0;
  console.log(
    `P → 2P → P: acknowledged writes lost ${lostWrites}, preloaded keys missing ${dataMissing} ${resharded ? "PASS" : "FAIL"}`,
  );
  return ok && missing === 0 && resharded;
}

async function main(): Promise<number> {
  const f = flags(process.argv.slice(2));
  const ladder = parsePrimaryLadder(f.primaries, [3, 10, 30, 100]);
  const o: LadderOptions = {
    replicas: wholeFlag("replicas-per-primary", f["replicas-per-primary"], 1),
    nodeTimeoutMs: wholeFlag("node-timeout-ms", f["node-timeout-ms"], DEFAULT_NODE_TIMEOUT_MS),
    pingIntervalMs:
      f["ping-interval-ms"] === undefined ? undefined : wholeFlag("ping-interval-ms", f["ping-interval-ms"], 0),
    steps: f.steps === true,
    reshardUpTo: wholeFlag("reshard-up-to", f["reshard-up-to"], DEFAULT_RESHARD_UP_TO),
  };
  const repeat = wholeFlag("repeat", f.repeat, 1);
  const rungs: Rung[] = [];
  // Written after every size, so a later size that fails (200 pods that do not start) keeps the earlier ones.
  const save = (): void => {
    if (f.json === undefined) return;
    // Through the schema the report reads it with (benchmarks/scale/ladder-file.ts).
    const file = ladderFileSchema.parse({
      measuredAt: new Date().toISOString(),
      valkeyVersion: resolveBinaries().server.version,
      machine: captureMachine(),
      replicasPerPrimary: o.replicas,
      nodeTimeoutMs: o.nodeTimeoutMs,
      ...(o.pingIntervalMs === undefined ? {} : { pingIntervalMs: o.pingIntervalMs }),
      rungs,
    });
    mkdirSync(dirname(f.json), { recursive: true });
    writeFileSync(f.json, `${JSON.stringify(file, null, 2)}\n`);
  };
  for (const p of ladder) {
    console.error(`bench:scale: ${p} primaries x (1 + ${o.replicas}), cluster-node-timeout ${o.nodeTimeoutMs} ms…`);
    const runs: Rung[] = [];
    try {
      for (let i = 0; i < repeat; i++) runs.push(await measure(p, o));
    } catch (err) {
      if (rungs.length > 0) report(rungs);
      throw new Error(`at ${p} primaries: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    rungs.push(combine(runs));
    save();
  }
  report(rungs);
  const ok = goals(rungs, o.nodeTimeoutMs);
  console.log(ok ? "bench:scale: every bar met" : "bench:scale: a bar was missed");
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench:scale: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
