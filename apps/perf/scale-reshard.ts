/**
 * The scale ladder's resharding step (scale-ladder.ts): a P-primary cluster holding data (KEYS_PER_PRIMARY values of
 * VALUE_BYTES per primary) grows to 2P primaries with the project's own scale-up (bootstrapCluster with P × (1 + r)
 * fresh processes: MEET, then the slots with their keys, atomic slot migration on Valkey 9) and shrinks back to P
 * (scaleIn: the slots back to the kept primaries, the added members forgotten), while one application writer (the
 * drills' WriteStream: plain SET, no WAIT, acknowledged only by OK, each write given a deadline) writes across every
 * slot. Measured:
 * - each direction's time, and of it the moving of slots (from the scale-up's "new nodes see cluster_state:ok" step
 *   to its last "took N slots" step; from the scale-in's "moving N slots" step to its next step);
 * - the data moved two ways: the preloaded keys the receiving primaries hold afterwards (SCAN) times the bytes of
 *   each, and the receiving primaries' own count of bytes received (INFO stats total_net_input_bytes +
 *   total_net_repl_input_bytes, before and after: protocol and snapshot framing included);
 * - the writer's longest pause (the longest gap between acknowledged writes, the drills' ledger), its acknowledged
 *   writes missing when read back afterwards, its unexpected replies and failed writes.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { bootstrapCluster } from "../../core/bootstrap/cluster-bootstrap.js";
import { scaleIn } from "../../core/bootstrap/cluster-scale-in.js";
import { clusterClient, WriteStream } from "../../core/drill/load.js";
import { longestGap } from "../../core/drill/ledger.js";
import { readInBatches } from "../../core/drill/target.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { roundRobinZones, StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { ClusterMember } from "../../core/bootstrap/cluster-member.js";
import { parseClusterNodes } from "../../core/topology/cluster-nodes-parser.js";
import { localMember } from "../../harness/local/local-cluster.js";
import { LocalFleet, type StartOptions, type ValkeyProcess } from "../../harness/local/valkey-process.js";

/** Data per primary before the scale-up: 4,000 values of 1,000 bytes (4 MB; each member's maxmemory is 32 MB). */
export const KEYS_PER_PRIMARY = 4000;
export const VALUE_BYTES = 1000;
/** The writer's rate (writes/s): a 2 ms resolution for its longest pause. */
const WRITER_RATE = 500;
/** A write not acknowledged within this is failed (as an application's deadline). */
const WRITER_DEADLINE_MS = 2000;

export interface ReshardFigures {
  /** P → 2P, whole (MEET, slots, replicas linked) and of it the moving of slots. */
  outMs: number;
  outMoveMs: number;
  /** 2P → P, whole and of it the moving of slots. */
  inMs: number;
  inMoveMs: number;
  /** Preloaded keys the new primaries held after the scale-up (SCAN), and those × (key + value bytes). */
  keysMoved: number;
  bytesMoved: number;
  /** The new primaries' own count of bytes received during the scale-up (INFO stats). */
  serverBytesIn: number;
  /** The same for the kept primaries during the scale-in, and the preloaded keys they gained back. */
  keysMovedBack: number;
  serverBytesBack: number;
  writer: {
    acked: number;
    lost: number;
    failed: number;
    unexpected: number;
    longestPauseMs: number;
    /** Each distinct error or unexpected reply of the failed writes (at most 5), in order of first sight. */
    failures: string[];
  };
  /** Preloaded keys that did not exist afterwards (EXISTS through a cluster client). */
  dataMissing: number;
}

/** A key of the preloaded data; its length is part of each key's bytes. */
const dataKey = (i: number): string => `d:${i}`;

/** The preloaded keys a node holds (SCAN MATCH d:*: the writer's keys are not data and not counted). */
async function dataKeysOn(c: Redis): Promise<number> {
  let n = 0;
  let cursor = "0";
  do {
    const [next, keys] = await c.scan(cursor, "MATCH", "d:*", "COUNT", 1000);
    n += keys.length;
    cursor = next;
  } while (cursor !== "0");
  return n;
}

async function statBytes(c: Redis): Promise<number> {
  const info = await c.info("stats");
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:(\\d+)`, "m").exec(info);
    if (m === null) throw new Error(`INFO stats has no ${name}`);
    return Number(m[1]);
  };
  return field("total_net_input_bytes") + field("total_net_repl_input_bytes");
}

const sum = async (xs: readonly Redis[], f: (c: Redis) => Promise<number>): Promise<number> =>
  (await Promise.all(xs.map(f))).reduce((a, b) => a + b, 0);

type Stamped = { at: number; text: string }[];

/** ms from the first step matching `from` to the first (or last) step after it matching `to`. */
function between(steps: Stamped, from: RegExp, to: RegExp, which: "first" | "last", what: string): number {
  const i = steps.findIndex((s) => from.test(s.text));
  const after = steps.slice(i + 1).filter((s) => to.test(s.text));
  const b = which === "first" ? after[0] : after.at(-1);
  if (i < 0 || b === undefined) {
    const missing = String(i < 0 ? from : to);
    throw new Error(`${what}: no step matching ${missing} in: ${steps.map((s) => s.text).join(" | ")}`);
  }
  return b.at - (steps[i] as Stamped[number]).at;
}

interface ReshardInput {
  fleet: LocalFleet;
  /** The formed P-primary cluster's processes, P × (1 + replicas). */
  nodes: readonly ValkeyProcess[];
  zoneMap: Record<string, string>;
  zones: readonly string[];
  primaries: number;
  replicas: number;
  /** Options of every added process (as the cluster's own). */
  startOptions: (i: number) => StartOptions;
  /** Each step of the scale-in as it happens, with the ms since it began (the ladder's --steps). */
  onScaleInStep?: (atMs: number, text: string) => void;
}

async function preload(seed: ValkeyProcess, keys: number): Promise<void> {
  const c = clusterClient([{ host: seed.host, port: seed.port }], undefined, 10_000, () => undefined, true);
  try {
    // Random bytes: the moves travel as RDB payloads, which LZF-compress (1,000 "x" or random hex moved as less than
    // the keys' size, so the server's count could not confirm the data's).
    for (let i = 0; i < keys; i += 1000)
      await Promise.all(
        Array.from({ length: Math.min(1000, keys - i) }, (_, k) => c.set(dataKey(i + k), randomBytes(VALUE_BYTES))),
      );
  } finally {
    c.disconnect();
  }
}

/** The cluster being resharded: every member (original and added), a client per process, the primaries' ids. */
interface Resharding {
  P: number;
  replicas: number;
  members: ClusterMember[];
  added: readonly ValkeyProcess[];
  client: (id: string) => Promise<Redis>;
  onScaleInStep?: ReshardInput["onScaleInStep"];
}

/** P → 2P: the project's scale-up over the added processes; the new primaries' data and bytes received. */
async function growTo2P(r: Resharding) {
  const steps: Stamped = [];
  const before = new Map(
    await Promise.all(r.added.map(async (n) => [n.address, await statBytes(await r.client(n.address))] as const)),
  );
  const t = performance.now();
  const grown = await bootstrapCluster({
    members: r.members,
    primaries: 2 * r.P,
    replicasPerPrimary: r.replicas,
    connector: new DirectConnector(),
    timeoutMs: 600_000,
    onStep: (text) => steps.push({ at: performance.now(), text }),
  });
  const outMs = performance.now() - t;
  const newPrimaries = (grown.plan?.shards ?? []).slice(r.P).map((s) => s.primary.id);
  if (newPrimaries.length !== r.P)
    throw new Error(`the scale-up made ${newPrimaries.length} new primaries, not ${r.P}`);
  const receivers = await Promise.all(newPrimaries.map(r.client));
  const after = await Promise.all(receivers.map(statBytes));
  return {
    outMs,
    outMoveMs: between(steps, /see cluster_state:ok/, /took \d+ slots/, "last", "the scale-up"),
    keysMoved: await sum(receivers, dataKeysOn),
    serverBytesIn: newPrimaries.reduce((a, id, k) => a + (after[k] ?? 0) - (before.get(id) ?? 0), 0),
    keptPrimaries: (grown.plan?.shards ?? []).slice(0, r.P).map((s) => s.primary.id),
  };
}

/** 2P → P: scaleIn keeping the original processes (the lowest ordinals); the kept primaries' data and bytes back. */
async function shrinkToP(r: Resharding, keptIds: readonly string[], keptPrimaries: readonly string[]) {
  const kept = await Promise.all(keptPrimaries.map(r.client));
  const keysBefore = await sum(kept, dataKeysOn);
  const bytesBefore = new Map(
    await Promise.all(keptPrimaries.map(async (id) => [id, await statBytes(await r.client(id))] as const)),
  );
  const steps: Stamped = [];
  const t = performance.now();
  await scaleIn({
    members: r.members,
    kept: keptIds,
    primaries: r.P,
    replicasPerPrimary: r.replicas,
    connector: new DirectConnector(),
    timeoutMs: 600_000,
    onStep: (text) => {
      const at = performance.now();
      steps.push({ at, text });
      r.onScaleInStep?.(at - t, text);
    },
  });
  const inMs = performance.now() - t;
  // The primaries now: the scale-in may have made another kept member a shard's primary (CLUSTER FAILOVER), and a
  // demoted one resyncs (LOADING refuses SCAN): each count is over the members that are primaries when it is taken.
  const now = await primariesAmong(r, keptIds);
  const stayed = keptPrimaries.filter((id) => now.includes(id));
  return {
    inMs,
    inMoveMs: between(
      steps,
      /^moving \d+ slots/,
      /replicates|leave the cluster|left the cluster|forgot/,
      "first",
      "the scale-in",
    ),
    keysMovedBack: (await sum(await Promise.all(now.map(r.client)), dataKeysOn)) - keysBefore,
    serverBytesBack:
      (await sum(await Promise.all(stayed.map(r.client)), statBytes)) -
      stayed.reduce((x, id) => x + (bytesBefore.get(id) ?? 0), 0),
  };
}

/** Which of `ids` are primaries, as the first of them sees it (CLUSTER NODES). */
async function primariesAmong(r: Resharding, ids: readonly string[]): Promise<string[]> {
  const view = parseClusterNodes((await (await r.client(ids[0] as string)).call("CLUSTER", "NODES")) as string);
  const byEndpoint = new Set(
    view.nodes.filter((n) => n.role === "primary" && n.endpoint).map((n) => `${n.endpoint?.host}:${n.endpoint?.port}`),
  );
  return ids.filter((id) => byEndpoint.has(id));
}

/** Runs one phase; its error names the phase (the original as its cause). */
async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The application writer: the drills' WriteStream, no WAIT, across every slot through ioredis' Cluster client. */
function writer(seed: ValkeyProcess): WriteStream {
  return new WriteStream({
    stream: "cluster-client",
    prefix: "w",
    rate: WRITER_RATE,
    waitTimeoutMs: 0,
    deadlineMs: WRITER_DEADLINE_MS,
    client: { kind: "cluster", client: clusterClient([seed], undefined, 1000, () => undefined) },
  });
}

/** P → 2P → P with data and a writer; every added process stopped after. */
export async function reshard(i: ReshardInput): Promise<ReshardFigures> {
  const { primaries: P, replicas } = i;
  const seed = i.nodes[0] as ValkeyProcess;
  const keys = P * KEYS_PER_PRIMARY;
  await phase("preload", () => preload(seed, keys));
  const added = await i.fleet.startMany(P * (1 + replicas), (k) => ({ ...i.startOptions(k), name: `grow-${k + 1}` }));
  const zoneMap = { ...i.zoneMap, ...roundRobinZones(added, [...i.zones]) };
  const byAddress = new Map([...i.nodes, ...added].map((n) => [n.address, n]));
  const clients = new Map<string, Redis>();
  const client = async (id: string): Promise<Redis> => {
    const n = byAddress.get(id) as ValkeyProcess;
    const c = clients.get(id) ?? (await openClient(n.host, n.port, n.address, { commandTimeoutMs: 10_000 }));
    clients.set(id, c);
    return c;
  };
  const r: Resharding = {
    P,
    replicas,
    members: [...byAddress.values()].map((n) => localMember(n, zoneMap[n.address] as string)),
    added,
    client,
    onScaleInStep: i.onScaleInStep,
  };
  const stream = writer(seed);
  const loadStart = Date.now();
  stream.start();
  try {
    await new Promise((res) => setTimeout(res, 500));
    const { keptPrimaries, ...out } = await phase("P → 2P", () => growTo2P(r));
    const keptIds = i.nodes.map((n) => n.address);
    const back = await phase("2P → P", () => shrinkToP(r, keptIds, keptPrimaries));
    await new Promise((res) => setTimeout(res, 500));
    await stream.stop();
    const w = await phase("the writer's read-back", () => writerFigures(stream, seed, loadStart, Date.now()));
    const dataMissing = await phase("back at P", () => verifyBack(i, keys, w.acked - w.lost, stream.records.length));
    const bytesMoved = out.keysMoved * (VALUE_BYTES + dataKey(keys - 1).length);
    return { ...out, ...back, bytesMoved, writer: w, dataMissing };
  } finally {
    await stream.stop().catch(() => undefined);
    for (const c of clients.values()) c.disconnect();
    await Promise.all(added.map((n) => n.stop()));
  }
}

async function writerFigures(
  stream: WriteStream,
  seed: ValkeyProcess,
  loadStart: number,
  loadStop: number,
): Promise<ReshardFigures["writer"]> {
  const acked = stream.records.filter((r) => r.ok);
  const reader = clusterClient([seed], undefined, 10_000, () => undefined, true);
  try {
    const readBack = await readInBatches(
      acked.map((r) => r.key),
      (batch) => Promise.all(batch.map((k) => reader.get(k))),
    );
    return {
      acked: acked.length,
      lost: acked.filter((r) => readBack.get(r.key) !== r.value).length,
      failed: stream.records.filter((r) => !r.ok && r.unexpectedReply === undefined).length,
      unexpected: stream.records.filter((r) => r.unexpectedReply !== undefined).length,
      longestPauseMs: Math.round(longestGap(stream.records, loadStart, loadStop).ms),
      failures: [
        ...new Set(stream.records.flatMap((r) => (r.ok ? [] : [(r.error ?? r.unexpectedReply ?? "").slice(0, 120)]))),
      ].slice(0, 5),
    };
  } finally {
    reader.disconnect();
  }
}

/**
 * Back at P: the verifier passes on the kept processes and their primaries hold between the data found plus the
 * acknowledged writes that read back and the data plus every write sent (a write past its deadline may still have
 * been applied); returns the preloaded keys missing.
 */
async function verifyBack(i: ReshardInput, keys: number, kept: number, sent: number): Promise<number> {
  const r = await verifyTopology({
    mode: "cluster",
    seeds: [i.nodes[0] as ValkeyProcess],
    connector: new DirectConnector(),
    zones: new StaticZoneSource(i.zoneMap),
    expect: { primaries: i.primaries, replicasPerPrimary: i.replicas },
  });
  if (!r.ok) throw new Error(`after the scale-in: ${JSON.stringify(r.failures.slice(0, 3))}`);
  const seed = i.nodes[0] as ValkeyProcess;
  const c = clusterClient([{ host: seed.host, port: seed.port }], undefined, 10_000, () => undefined, true);
  let missing = 0;
  try {
    for (let k = 0; k < keys; k += 1000) {
      const found = await Promise.all(
        Array.from({ length: Math.min(1000, keys - k) }, (_, j) => c.exists(dataKey(k + j))),
      );
      missing += found.filter((n) => n !== 1).length;
    }
  } finally {
    c.disconnect();
  }
  const held = r.shards.reduce((n, s) => n + (s.primary.keys ?? 0), 0);
  if (held < keys - missing + kept || held > keys + sent)
    throw new Error(
      `after the scale-in the primaries hold ${held} keys: not between ${keys - missing + kept} and ${keys + sent}`,
    );
  return missing;
}

/** The step on its own cluster: P × (1 + replicas) processes started and formed, then reshard(); every one stopped. */
export async function reshardStep(o: {
  primaries: number;
  replicas: number;
  zones: readonly string[];
  startOptions: (i: number) => StartOptions;
  onScaleInStep?: ReshardInput["onScaleInStep"];
}): Promise<ReshardFigures> {
  const fleet = new LocalFleet();
  try {
    const nodes = await fleet.startMany(o.primaries * (1 + o.replicas), o.startOptions);
    const zoneMap = roundRobinZones(nodes, [...o.zones]);
    await bootstrapCluster({
      members: nodes.map((n) => localMember(n, zoneMap[n.address] as string)),
      primaries: o.primaries,
      replicasPerPrimary: o.replicas,
      connector: new DirectConnector(),
      timeoutMs: 300_000,
    });
    return await reshard({ fleet, nodes, zoneMap, ...o });
  } finally {
    await fleet.stopAll();
  }
}
