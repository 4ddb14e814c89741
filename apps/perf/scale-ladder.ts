/**
 * npm run bench:scale -- [--primaries 3,10,30,100] [--replicas-per-primary 1] [--node-timeout-ms N]
 *                         [--repeat N] [--json FILE] [--steps]
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
 * --repeat N runs each size N times: each step's median, its range beside it, the goals against the medians.
 * --steps prints the bootstrap's steps with their times on stderr. Prints a table, then per step the exponent k
 * (time ∝ P^k) between neighbouring sizes and fitted over all, and the goals against the largest size
 * measured. Not measured here yet: heal after a full restart, scale-out P → 2P with data, the Pulumi program at
 * that shape (README, Status).
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Redis } from "ioredis";
import type { ClusterPlan } from "../../core/bootstrap/az-aware-planner.js";
import { bootstrapCluster, type BootstrapResult } from "../../core/bootstrap/cluster-bootstrap.js";
import { loadShardsOf } from "../../core/drill/load-shards.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { roundRobinZones, StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { localMember } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { wholeFlag } from "./perf-args.js";
import { fittedExponent, pairExponent, parsePrimaryLadder, spreadOf, type LadderPoint } from "./scale-fit.js";

const ZONES = ["zone-a", "zone-b", "zone-c"];
/** The stack's default cluster-node-timeout (config valkey.cluster.nodeTimeoutMs). */
const DEFAULT_NODE_TIMEOUT_MS = 15_000;
const STEPS = ["start", "bootstrap", "verify", "failover"] as const;
type Step = (typeof STEPS)[number];

interface Rung {
  primaries: number;
  nodes: number;
  killed: number;
  ms: Record<Step, number>;
  /** With --repeat: every run's times per step (ms is their median). */
  samples?: Record<Step, number[]>;
  /** The failover's writers, one per killed primary: acknowledged (OK) writes, and those the new primary lacks. */
  writes: { acked: number; lost: number; lostPerShard: Record<string, number>; oldestLostMsBeforeKill: number | null };
}

/**
 * One writer on a shard's primary, as an application without WAIT: SET `{key}:n` one after the other (each waits
 * for its reply), an acknowledgement being the reply OK itself. Stopped by stop(); `acked` keeps each OK's time.
 */
class ShardWriter {
  readonly acked: { key: string; at: number }[] = [];
  private running = true;
  private done: Promise<void>;
  constructor(
    private readonly c: Redis,
    private readonly tag: string,
  ) {
    this.done = this.loop();
  }
  private async loop(): Promise<void> {
    for (let n = 0; this.running; n++) {
      const key = `{${this.tag}}:${n}`;
      const r = await this.c.set(key, "v").catch(() => null);
      if (r === "OK") this.acked.push({ key, at: Date.now() });
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

const seconds = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

/** The flags (node:util parseArgs: an unknown flag or a missing value is an error naming it). */
function flags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      "primaries": { type: "string" },
      "replicas-per-primary": { type: "string" },
      "node-timeout-ms": { type: "string" },
      "repeat": { type: "string" },
      "json": { type: "string" },
      "steps": { type: "boolean" },
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
interface Victim {
  shard: string;
  key: string;
  /** On the shard's replica: takes the key's SET once promoted. */
  replica: Redis;
  writer: ShardWriter;
  writable: boolean;
}

/** Every tenth shard's primary killed at once, writers on each: until each such shard takes writes again. */
async function failover(
  boot: BootstrapResult & { plan: ClusterPlan },
  byAddress: Map<string, ValkeyProcess>,
  clients: Redis[],
) {
  const { plan, nodeIds } = boot;
  const shards = plan.shards.filter((_, i) => i % 10 === 0);
  const node = (id: string | undefined): ValkeyProcess => byAddress.get(id ?? "") as ValkeyProcess;
  const open = async (p: ValkeyProcess): Promise<Redis> => {
    const c = await openClient(p.host, p.port, p.address, { commandTimeoutMs: 1000 });
    clients.push(c);
    return c;
  };
  // Each shard's hash tag, as the drills find it (CLUSTER KEYSLOT on a live member).
  const tags = await loadShardsOf(node(plan.shards[1]?.primary.id), undefined);
  const victims: Victim[] = await Promise.all(
    shards.map(async (s) => {
      const key = tags.find((t) => t.nodeIds[0] === nodeIds[s.primary.id])?.tag;
      if (key === undefined) throw new Error(`no hash tag found for the shard of ${s.primary.id}`);
      const writer = new ShardWriter(await open(node(s.primary.id)), key);
      const replica = await open(node(s.replicas[0]?.id));
      return { shard: `${s.slots.start}-${s.slots.end}`, key, replica, writer, writable: false };
    }),
  );
  // Writes flowing on every victim shard for a second before the kill.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const t = performance.now();
  const killedAt = Date.now();
  for (const s of shards) node(s.primary.id).signal("SIGKILL");
  await pollUntil(
    async () => {
      const left = victims.filter((x) => !x.writable);
      await Promise.all(
        left.map(async (x) => (x.writable = (await x.replica.set(x.key, "v").catch(() => null)) === "OK")),
      );
      const still = victims.filter((x) => !x.writable).map((x) => x.shard);
      return still.length === 0 ? true : `shards not writable yet: ${still.join(", ")}`;
    },
    { timeoutMs: 60_000, intervalMs: 50, what: `every shard of ${shards.length} killed primaries to take writes` },
  );
  const ms = performance.now() - t;
  return { ms, killed: shards.length, writes: await lostWrites(victims, killedAt) };
}

/** Each victim's acknowledged writes its new primary lacks. */
async function lostWrites(victims: readonly Victim[], killedAt: number): Promise<Rung["writes"]> {
  const writes: Rung["writes"] = { acked: 0, lost: 0, lostPerShard: {}, oldestLostMsBeforeKill: null };
  for (const x of victims) {
    await x.writer.stop();
    const p = x.replica.pipeline();
    for (const a of x.writer.acked) p.exists(a.key);
    const found = ((await p.exec()) ?? []).map(([err, v]) => (err === null ? Number(v) : -1));
    if (found.some((v) => v < 0)) throw new Error(`shard ${x.shard}: EXISTS failed on its new primary`);
    const lost = x.writer.acked.filter((_, i) => found[i] === 0);
    writes.acked += x.writer.acked.length;
    writes.lost += lost.length;
    writes.lostPerShard[x.shard] = lost.length;
    for (const l of lost) writes.oldestLostMsBeforeKill = Math.max(writes.oldestLostMsBeforeKill ?? 0, killedAt - l.at);
  }
  return writes;
}

interface LadderOptions {
  replicas: number;
  nodeTimeoutMs: number;
  steps: boolean;
}

async function measure(primaries: number, o: LadderOptions): Promise<Rung> {
  const replicas = o.replicas;
  const fleet = new LocalFleet();
  const count = primaries * (1 + replicas);
  const clients: Redis[] = [];
  try {
    let t = performance.now();
    const nodes = await fleet.startMany(count, (i) => ({
      name: `scale-${i + 1}`,
      clusterEnabled: true,
      clusterNodeTimeoutMs: o.nodeTimeoutMs,
      extra: { maxmemory: "32mb" },
    }));
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
      ms: { start, bootstrap, verify, failover: f.ms },
      writes: f.writes,
    };
  } finally {
    for (const c of clients) c.disconnect();
    await fleet.stopAll();
  }
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
  };
}

/** A step's time for the table: its median, and the range over the runs when repeated. */
function cell(r: Rung, step: Step, fmt: (ms: number) => string): string {
  const s = r.samples?.[step];
  if (s === undefined) return fmt(r.ms[step]);
  const { min, max } = spreadOf(s);
  return `${fmt(r.ms[step])} (${fmt(min)}–${fmt(max)})`;
}

function report(rungs: readonly Rung[]): void {
  console.log(
    "primaries  nodes  killed   start s  bootstrap s  verify ms  failover s  acked  lost (per shard; oldest)",
  );
  for (const r of rungs) {
    const w = r.writes;
    const per = Object.values(w.lostPerShard).join("/");
    const oldest = w.oldestLostMsBeforeKill === null ? "" : `; ${w.oldestLostMsBeforeKill} ms before the kill`;
    console.log(
      `${String(r.primaries).padStart(9)}  ${String(r.nodes).padStart(5)}  ${String(r.killed).padStart(6)}  ` +
        `${cell(r, "start", seconds).padStart(8)}  ${cell(r, "bootstrap", seconds).padStart(11)}  ` +
        `${cell(r, "verify", (x) => x.toFixed(0)).padStart(9)}  ${cell(r, "failover", seconds).padStart(10)}  ` +
        `${String(w.acked).padStart(5)}  ${w.lost} (${per}${oldest})`,
    );
  }
  if (rungs.length < 2) return;
  console.log("\nexponent k (time ∝ P^k): between neighbouring sizes; fitted over all");
  for (const step of STEPS) {
    const points: LadderPoint[] = rungs.map((r) => ({ primaries: r.primaries, ms: r.ms[step] }));
    const pairs = points.slice(1).map((p, i) => {
      const a = points[i] as LadderPoint;
      return `${a.primaries}→${p.primaries}: ${pairExponent(a, p).toFixed(2)}`;
    });
    console.log(`  ${step.padEnd(9)} ${pairs.join("  ")}  fitted: ${fittedExponent(points).toFixed(2)}`);
  }
}

/** The goals on this machine, against the largest size measured (a goal's size not reached: said so). */
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
  return ok;
}

async function main(): Promise<number> {
  const f = flags(process.argv.slice(2));
  const ladder = parsePrimaryLadder(f.primaries, [3, 10, 30, 100]);
  const o: LadderOptions = {
    replicas: wholeFlag("replicas-per-primary", f["replicas-per-primary"], 1),
    nodeTimeoutMs: wholeFlag("node-timeout-ms", f["node-timeout-ms"], DEFAULT_NODE_TIMEOUT_MS),
    steps: f.steps === true,
  };
  const repeat = wholeFlag("repeat", f.repeat, 1);
  const rungs: Rung[] = [];
  for (const p of ladder) {
    console.error(`bench:scale: ${p} primaries x (1 + ${o.replicas}), cluster-node-timeout ${o.nodeTimeoutMs} ms…`);
    const runs: Rung[] = [];
    for (let i = 0; i < repeat; i++) runs.push(await measure(p, o));
    rungs.push(combine(runs));
  }
  report(rungs);
  const ok = goals(rungs, o.nodeTimeoutMs);
  const json = f.json;
  if (json !== undefined)
    writeFileSync(
      json,
      `${JSON.stringify({ replicasPerPrimary: o.replicas, nodeTimeoutMs: o.nodeTimeoutMs, rungs }, null, 2)}\n`,
    );
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
