/**
 * Cluster-mode analysis: PURE, from captured replies to a report. The seed's full
 * `CLUSTER NODES` view defines the topology (who is primary, who replicates whom, who owns
 * which slots); every other node contributes its `CLUSTER INFO`, `INFO replication`, DBSIZE
 * and a digest of its own `CLUSTER NODES` view (its own line and the nodes it flags), so a
 * failure any one node sees is reported.
 *
 * Decisions:
 * - Shards are the seed view's primaries, except a primary flagged `fail` that owns no slots
 *   (a deposed primary after failover), which is reported as NODE_FAILED only.
 * - A replica counts as working when the verifier reached it, its own INFO shows
 *   `master_link_status:up`, and no view flags it `fail` / `fail?`. PRIMARY_WITHOUT_REPLICA
 *   and NO_CROSS_AZ_REPLICA are judged on working replicas; a primary with no working
 *   replica gets PRIMARY_WITHOUT_REPLICA only.
 * - AZ_PRIMARY_MAJORITY: failover needs a majority of primaries, so a zone holding more than
 *   half of them takes the majority down with it. Checked when the nodes span ≥ 3 zones and
 *   there are ≥ 2 primaries; with fewer zones one zone always holds at least half, which is
 *   not fixable by placement, so the check is skipped with a note.
 * - Without a zone source, zone checks are skipped (noted, not failed).
 * - CLUSTER INFO conditions seen by several nodes become one failure naming the first of
 *   them (the seed when it is one) and listing the others.
 */
import { CLUSTER_SLOT_COUNT, mergeSlotRanges, type SlotRange } from "../topology/slots.js";
import { endpointKey } from "../../vocabulary/endpoint.js";
import {
  checkZones,
  FailureList,
  finishReport,
  listSome,
  infoNumber,
  infoValue,
  replicationOffset,
  type AnalysisContext,
  type NodeCapture,
} from "./analysis-common.js";
import {
  parseClusterNodeLine,
  parseClusterNodes,
  type ClusterNodeEntry,
  type ClusterNodesDigest,
} from "../topology/cluster-nodes-parser.js";
import type { ReplicaReport, ShardReport, TopologyReport } from "./verify-types.js";

export interface ClusterNodeCapture extends NodeCapture {
  /** Digest of this node's own CLUSTER NODES view (see digestClusterNodes). */
  clusterNodes?: ClusterNodesDigest;
}

export interface ClusterCapture {
  /** The seed as given (`host:port`). */
  seed: string;
  /** The seed's announced address (its `myself` line), or `seed` when it has none. */
  seedAddress: string;
  /** The seed's CLUSTER NODES text; undefined with `seedError`. */
  seedClusterNodes?: string;
  seedClusterInfo?: string;
  /** Why the seed could not describe the cluster (e.g. cluster support disabled). */
  seedError?: string;
  /** Every node the seed knows with an address, the seed included, keyed by announced address. */
  nodes: ClusterNodeCapture[];
}

export function formatSlotRanges(ranges: readonly SlotRange[]): string[] {
  return ranges.map((r) => (r.start === r.end ? String(r.start) : `${r.start}-${r.end}`));
}

/** A condition one node reported about the cluster. */
interface Seen {
  address: string;
  detail: string;
}

/** Adds one failure for a condition seen by several nodes, naming the first (the seed when it is one). */
function aggregate(
  failures: FailureList,
  code: "CLUSTER_STATE_NOT_OK" | "SLOTS_UNASSIGNED" | "SLOTS_NOT_OK",
  seen: readonly Seen[],
  total: number,
): void {
  const first = seen[0];
  if (first === undefined) return;
  const others =
    seen.length > 1 ? ` (seen by ${seen.length} of ${total} nodes: ${listSome(seen.map((x) => x.address))})` : "";
  failures.add(code, `${first.address}: ${first.detail}${others}`, first.address);
}

/** The seed's view and what every function below reads from it. */
interface ClusterView {
  c: ClusterCapture;
  entries: ClusterNodeEntry[];
  byId: Map<string, ClusterNodeEntry>;
  addressOf: (n: ClusterNodeEntry) => string;
  captures: Map<string, ClusterNodeCapture>;
  failures: FailureList;
  notes: string[];
}

/** The seed cannot describe a cluster: CLUSTER_MODE_DISABLED or CLUSTER_STATE_NOT_OK. */
function seedFailure(c: ClusterCapture, failures: FailureList): void {
  if (c.seedError !== undefined && /cluster support disabled/i.test(c.seedError)) {
    const what = "it is not a cluster node (a replication-mode primary or replica? use --mode replication)";
    failures.add("CLUSTER_MODE_DISABLED", `seed ${c.seed} has cluster mode off (cluster-enabled no): ${what}`, c.seed);
  } else
    failures.add(
      "CLUSTER_STATE_NOT_OK",
      `seed ${c.seed} cannot describe a cluster: ${c.seedError ?? "no CLUSTER NODES reply"}`,
      c.seed,
    );
}

/**
 * Failure flags from the seed's view and every node's digest, and unreachable nodes: NODE_FAILED; the failed node ids.
 */
function failedNodeIds(v: ClusterView): Set<string> {
  const { c, entries, byId, addressOf, captures, failures, notes } = v;
  const flaggedBy = new Map<string, { fail: string[]; pfail: string[] }>();
  const flag = (id: string, viewer: string, failed: boolean, pfail: boolean): void => {
    if (!failed && !pfail) return;
    let f = flaggedBy.get(id);
    if (f === undefined) flaggedBy.set(id, (f = { fail: [], pfail: [] }));
    if (failed) f.fail.push(viewer);
    else f.pfail.push(viewer);
  };
  for (const n of entries) flag(n.id, c.seedAddress, n.failed, n.pfail);
  for (const cap of c.nodes) {
    const d = cap.clusterNodes;
    if (d === undefined || cap.address === c.seedAddress) continue;
    for (const line of d.flagged) {
      const e = parseClusterNodeLine(line);
      if (e) flag(e.id, cap.address, e.failed, e.pfail);
    }
    if (d.knownNodes !== entries.length)
      notes.push(`${cap.address} knows ${d.knownNodes} nodes, the seed knows ${entries.length}`);
    const self = d.self === undefined ? undefined : parseClusterNodeLine(d.self);
    const asSeenBySeed = self === undefined ? undefined : byId.get(self.id);
    if (self !== undefined && asSeenBySeed === undefined)
      notes.push(`${cap.address} (${self.id.slice(0, 8)}…) is not in the seed's view`);
    else if (self !== undefined && asSeenBySeed !== undefined && self.role !== asSeenBySeed.role) {
      notes.push(`${cap.address} calls itself ${self.role}, the seed sees it as ${asSeenBySeed.role}`);
    }
  }

  const failedIds = new Set<string>();
  for (const n of entries) {
    const address = addressOf(n);
    const reasons: string[] = [];
    const f = flaggedBy.get(n.id);
    if (f && f.fail.length > 0) reasons.push(`flagged fail by ${listSome(f.fail)}`);
    if (f && f.pfail.length > 0) reasons.push(`flagged fail? by ${listSome(f.pfail)}`);
    if (n.endpoint === undefined && !n.myself) reasons.push("has no known address (noaddr)");
    const err = captures.get(address)?.error;
    if (err !== undefined) reasons.push(`not reachable from the verifier (${err})`);
    if (n.handshake) notes.push(`${address} is still in handshake`);
    if (reasons.length > 0) {
      failedIds.add(n.id);
      failures.add("NODE_FAILED", `${address} (${n.role}, ${n.id.slice(0, 8)}…) ${reasons.join("; ")}`, address);
    }
  }
  return failedIds;
}

/** Each node's CLUSTER INFO: CLUSTER_STATE_NOT_OK now; the slot conditions for checkSlotOwnership. */
function checkClusterInfo(v: ClusterView): { slotsShort: Seen[]; slotsBad: Seen[]; viewsWithInfo: number } {
  const { c, captures, failures } = v;
  const seedInfo = c.seedClusterInfo;
  const ordered = [c.seedAddress, ...c.nodes.map((n) => n.address).filter((a) => a !== c.seedAddress)];
  const notOk: Seen[] = [];
  const slotsShort: Seen[] = [];
  const slotsBad: Seen[] = [];
  let viewsWithInfo = 0;
  for (const address of ordered) {
    const info = address === c.seedAddress && seedInfo !== undefined ? seedInfo : captures.get(address)?.clusterInfo;
    if (info === undefined) continue;
    viewsWithInfo++;
    const state = infoValue(info, "cluster_state");
    if (state !== "ok") notOk.push({ address, detail: `cluster_state:${state ?? "?"}` });
    const assigned = infoNumber(info, "cluster_slots_assigned") ?? 0;
    const ok = infoNumber(info, "cluster_slots_ok") ?? 0;
    if (assigned < CLUSTER_SLOT_COUNT) slotsShort.push({ address, detail: `cluster_slots_assigned:${assigned}` });
    const pfail = infoNumber(info, "cluster_slots_pfail") ?? 0;
    const fail = infoNumber(info, "cluster_slots_fail") ?? 0;
    if (pfail > 0 || fail > 0 || ok < assigned) {
      slotsBad.push({ address, detail: `slots ok ${ok} of ${assigned} assigned, pfail ${pfail}, fail ${fail}` });
    }
  }
  aggregate(failures, "CLUSTER_STATE_NOT_OK", notOk, viewsWithInfo);
  return { slotsShort, slotsBad, viewsWithInfo };
}

/** Slot ownership in the seed's view (SLOTS_UNASSIGNED), and every node's slot conditions (SLOTS_NOT_OK). */
function checkSlotOwnership(v: ClusterView, info: ReturnType<typeof checkClusterInfo>): void {
  const { c, entries, failures } = v;
  const { slotsShort, slotsBad, viewsWithInfo } = info;
  const owned = new Uint8Array(CLUSTER_SLOT_COUNT);
  let assignedCount = 0;
  for (const n of entries) {
    if (n.role !== "primary") continue;
    for (const r of n.slots) {
      for (let s = r.start; s <= r.end; s++) {
        if (owned[s] === 0) {
          owned[s] = 1;
          assignedCount++;
        }
      }
    }
  }
  if (assignedCount < CLUSTER_SLOT_COUNT) {
    const missing: SlotRange[] = [];
    for (let s = 0; s < CLUSTER_SLOT_COUNT; s++) {
      if (owned[s] !== 0) continue;
      const last = missing[missing.length - 1];
      if (last !== undefined && last.end === s - 1) missing[missing.length - 1] = { start: last.start, end: s };
      else missing.push({ start: s, end: s });
    }
    failures.add(
      "SLOTS_UNASSIGNED",
      `${CLUSTER_SLOT_COUNT - assignedCount} of ${CLUSTER_SLOT_COUNT} slots have no primary in ${c.seedAddress}'s view: ${listSome(formatSlotRanges(missing), 8)}`,
      c.seedAddress,
    );
  } else {
    aggregate(failures, "SLOTS_UNASSIGNED", slotsShort, viewsWithInfo);
  }
  aggregate(failures, "SLOTS_NOT_OK", slotsBad, viewsWithInfo);
}

/** Each primary's replicas (by primary id); a replica following no known primary gets a note instead. */
function replicasByPrimary(v: ClusterView): Map<string, ClusterNodeEntry[]> {
  const { entries, byId, addressOf, notes } = v;
  const replicasOf = new Map<string, ClusterNodeEntry[]>();
  for (const n of entries) {
    if (n.role !== "replica") continue;
    if (n.primaryId === undefined || byId.get(n.primaryId)?.role !== "primary") {
      notes.push(
        `replica ${addressOf(n)} follows ${n.primaryId === undefined ? "no primary" : `unknown primary ${n.primaryId.slice(0, 8)}…`}`,
      );
      continue;
    }
    let list = replicasOf.get(n.primaryId);
    if (list === undefined) replicasOf.set(n.primaryId, (list = []));
    list.push(n);
  }
  return replicasOf;
}

/** The primaries (a failed one without slots left out), by their first slot. */
function primariesBySlot(entries: readonly ClusterNodeEntry[]): ClusterNodeEntry[] {
  const primaries = entries.filter((n) => n.role === "primary" && !(n.failed && n.slots.length === 0));
  const firstSlot = new Map(
    primaries.map((n) => [n.id, n.slots.reduce((m, r) => Math.min(m, r.start), CLUSTER_SLOT_COUNT)]),
  );
  primaries.sort((a, b) => (firstSlot.get(a.id) ?? 0) - (firstSlot.get(b.id) ?? 0));
  return primaries;
}

/**
 * What one shard's replicas are measured against: its primary's zone and offset, the failed ids, the working set to
 * fill.
 */
interface ShardContext {
  zoneOf: (address: string) => string | undefined;
  failedIds: ReadonlySet<string>;
  working: Set<string>;
}

/** A primary's replica: its link (up and not failed: working) and lag. */
function clusterReplicaReport(
  v: ClusterView,
  s: ShardContext,
  r: ClusterNodeEntry,
  primary: { zone: string | undefined; offset: number | undefined },
): ReplicaReport {
  const { zone, offset: primaryOffset } = primary;
  const raddr = v.addressOf(r);
  const rzone = s.zoneOf(raddr);
  const rinfo = v.captures.get(raddr)?.replicationInfo;
  const linkUp = infoValue(rinfo, "master_link_status") === "up" && !s.failedIds.has(r.id);
  if (linkUp) s.working.add(raddr);
  const rOffset = replicationOffset(rinfo);
  const report: ReplicaReport = {
    address: raddr,
    zone: rzone,
    crossAz: zone !== undefined && rzone !== undefined && zone !== rzone,
    linkUp,
    nodeId: r.id,
  };
  if (primaryOffset !== undefined && rOffset !== undefined) report.lagBytes = Math.max(0, primaryOffset - rOffset);
  return report;
}

/**
 * One shard: its primary's slots (SLOTS_NOT_OK when it is failed) and replicas (PRIMARY_WITHOUT_REPLICA when none
 * works).
 */
function shardOf(
  v: ClusterView,
  s: ShardContext,
  p: ClusterNodeEntry,
  replicasOf: readonly ClusterNodeEntry[],
): ShardReport {
  const { captures, failures } = v;
  const address = v.addressOf(p);
  const zone = s.zoneOf(address);
  const merged = mergeSlotRanges(p.slots);
  const slotCount = merged.reduce((sum, r) => sum + r.end - r.start + 1, 0);
  const primaryOffset = replicationOffset(captures.get(address)?.replicationInfo);
  if (slotCount > 0 && s.failedIds.has(p.id)) {
    failures.add(
      "SLOTS_NOT_OK",
      `slots ${listSome(formatSlotRanges(merged), 4)} are owned by ${address}, which is failed or unreachable`,
      address,
    );
  }
  const replicas: ReplicaReport[] = replicasOf.map((r) =>
    clusterReplicaReport(v, s, r, { zone, offset: primaryOffset }),
  );
  const shard: ShardReport = {
    primary: {
      address,
      zone,
      nodeId: p.id,
      slotRanges: formatSlotRanges(merged),
      slotCount,
      keys: captures.get(address)?.dbsize,
    },
    replicas,
  };
  const workingReplicas = replicas.filter((r) => r.linkUp);
  if (workingReplicas.length === 0) {
    const why =
      replicas.length === 0
        ? "has no replica"
        : `has no working replica (${listSome(replicas.map((r) => `${r.address}: link down or failed`))})`;
    failures.add(
      "PRIMARY_WITHOUT_REPLICA",
      `primary ${address} (slots ${listSome(formatSlotRanges(merged), 4) || "none"}) ${why}`,
      address,
    );
  }
  return shard;
}

/**
 * The shards (primaries by first slot, their replicas and which of them work): SLOTS_NOT_OK, PRIMARY_WITHOUT_REPLICA.
 */
function buildShards(
  v: ClusterView,
  ctx: AnalysisContext,
  failedIds: ReadonlySet<string>,
): { shards: ShardReport[]; working: Set<string> } {
  const zoneOf = (address: string): string | undefined => ctx.zones?.get(address);
  const replicasOf = replicasByPrimary(v);
  const working = new Set<string>();
  const s: ShardContext = { zoneOf, failedIds, working };
  const shards: ShardReport[] = primariesBySlot(v.entries).map((p) => shardOf(v, s, p, replicasOf.get(p.id) ?? []));
  return { shards, working };
}

/** Zone checks on working replicas, and AZ_PRIMARY_MAJORITY (with ≥ 3 zones in use and ≥ 2 primaries). */
function checkZonePlacement(
  v: ClusterView,
  ctx: AnalysisContext,
  shards: readonly ShardReport[],
  working: ReadonlySet<string>,
): void {
  const { failures, notes } = v;
  // A primary with no working replica already has PRIMARY_WITHOUT_REPLICA.
  checkZones(shards, ctx.zones, (a) => working.has(a), failures, notes, false);
  if (ctx.zones !== undefined) {
    const zonesInUse = new Set<string>();
    for (const s of shards)
      for (const n of [s.primary, ...s.replicas]) if (n.zone !== undefined) zonesInUse.add(n.zone);
    const perZone = new Map<string, string[]>();
    for (const s of shards) {
      if (s.primary.zone === undefined) continue;
      const list = perZone.get(s.primary.zone) ?? [];
      list.push(s.primary.address);
      perZone.set(s.primary.zone, list);
    }
    if (zonesInUse.size >= 3 && shards.length >= 2) {
      for (const [zone, list] of perZone) {
        if (list.length * 2 > shards.length) {
          failures.add(
            "AZ_PRIMARY_MAJORITY",
            `zone ${zone} holds ${list.length} of ${shards.length} primaries (${listSome(list)}): losing ${zone} loses the primary majority, so no automatic failover`,
            list[0],
          );
        }
      }
    } else if (shards.length >= 2) {
      notes.push(`AZ primary-majority check skipped: the nodes span ${zonesInUse.size} zone(s); it needs ≥ 3`);
    }
  }
}

/** SHAPE_MISMATCH against `ctx.expect`. */
function checkExpectedShape(ctx: AnalysisContext, shards: readonly ShardReport[], failures: FailureList): void {
  const e = ctx.expect ?? {};
  if (e.primaries !== undefined && e.primaries !== shards.length) {
    failures.add("SHAPE_MISMATCH", `expected ${e.primaries} primaries, found ${shards.length}`);
  }
  if (e.replicasPerPrimary !== undefined) {
    for (const s of shards) {
      if (s.replicas.length !== e.replicasPerPrimary) {
        failures.add(
          "SHAPE_MISMATCH",
          `primary ${s.primary.address} has ${s.replicas.length} replica(s), expected ${e.replicasPerPrimary}`,
          s.primary.address,
        );
      }
    }
  }
  const totalReplicas = shards.reduce((sum, s) => sum + s.replicas.length, 0);
  if (e.replicas !== undefined && e.replicas !== totalReplicas) {
    failures.add("SHAPE_MISMATCH", `expected ${e.replicas} replicas in total, found ${totalReplicas}`);
  }
}

export function analyseCluster(c: ClusterCapture, ctx: AnalysisContext): TopologyReport {
  const failures = new FailureList();
  const notes: string[] = [];
  if (c.seedClusterNodes === undefined || c.seedError !== undefined) {
    seedFailure(c, failures);
    return finishReport({ mode: "cluster", shards: [], nodeCount: 0, seed: c.seed }, failures, notes, ctx.zones);
  }
  const parsed = parseClusterNodes(c.seedClusterNodes);
  if (parsed.invalid.length > 0) {
    notes.push(
      `ignored ${parsed.invalid.length} unparseable CLUSTER NODES line(s) from the seed: ${listSome(
        parsed.invalid.map((l) => JSON.stringify(l.slice(0, 80))),
        3,
      )}`,
    );
  }
  const entries = parsed.nodes;
  const byId = new Map(entries.map((n) => [n.id, n]));
  const addressOf = (n: ClusterNodeEntry): string =>
    n.endpoint !== undefined ? endpointKey(n.endpoint) : n.myself ? c.seedAddress : `${n.id.slice(0, 8)}… (no address)`;
  const captures = new Map(c.nodes.map((n) => [n.address, n]));
  const v: ClusterView = { c, entries, byId, addressOf, captures, failures, notes };
  const failedIds = failedNodeIds(v);
  checkSlotOwnership(v, checkClusterInfo(v));
  const { shards, working } = buildShards(v, ctx, failedIds);
  checkZonePlacement(v, ctx, shards, working);
  checkExpectedShape(ctx, shards, failures);
  const seedInfo = c.seedClusterInfo;
  return finishReport(
    {
      mode: "cluster",
      shards,
      nodeCount: entries.length,
      clusterState: infoValue(seedInfo, "cluster_state"),
      slotsAssigned: infoNumber(seedInfo, "cluster_slots_assigned"),
      slotsOk: infoNumber(seedInfo, "cluster_slots_ok"),
      seed: c.seed,
    },
    failures,
    notes,
    ctx.zones,
  );
}
