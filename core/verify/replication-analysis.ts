/**
 * Replication-mode analysis: PURE, from captured `INFO replication` replies to a report.
 *
 * The seed must be the primary (role:master), else NOT_PRIMARY naming the primary it
 * follows. Replicas are the primary's `slaveN:` lines; each replica's own INFO gives its
 * link status and offset. Seeds given beyond the primary that the primary does not list
 * (e.g. a replica pointed at a dead port) are reported as REPLICA_LINK_DOWN.
 *
 * Decisions:
 * - A replica's link is up when the primary lists it `state=online` AND the replica itself
 *   reports `master_link_status:up`; an unreachable replica's link counts as down.
 * - Lag = primary `master_repl_offset` − the replica's own `slave_repl_offset` (or, when the
 *   replica cannot be asked, the offset it last acknowledged in the primary's slave line).
 * - REPLICA_COUNT compares the replicas the primary lists with `expect.replicas`
 *   (or `expect.replicasPerPrimary`, the same thing with one primary). Without an expectation a
 *   primary that lists no replica at all fails NO_REPLICAS (expect 0 to accept one).
 * - NO_CROSS_AZ_REPLICA: no replica with a live link is in a zone other than the
 *   primary's (a primary with no live replica at all fails it too).
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo, parseInfoFields } from "../topology/info.js";
import {
  checkZones,
  FailureList,
  finishReport,
  infoValue,
  replicationOffset,
  type AnalysisContext,
  type NodeCapture,
} from "./analysis-common.js";
import { DEFAULT_REPLICA_LAG_BYTES, type ReplicaReport, type TopologyReport } from "./verify-types.js";

export interface ReplicationCapture {
  /** The seed that answered, `host:port` as given: the primary when healthy. */
  seed: string;
  seedReplicationInfo: string;
  /** DBSIZE on the seed when it is a primary and keys are counted. */
  seedDbsize?: number;
  /** Replicas the primary lists, plus other given seeds; keyed by announced address. */
  replicas: NodeCapture[];
  /** Addresses of `replicas` that came from --seed rather than the primary's slave lines. */
  extraSeeds?: string[];
}

export interface ListedReplica {
  address: string;
  endpoint: NodeEndpoint;
  state: string | undefined;
  /** Offset the replica last acknowledged, per the primary. */
  offset: number | undefined;
}

/** The primary's `slaveN:ip=...,port=...,state=...,offset=...` lines. */
export function listedReplicas(info: Map<string, string>): ListedReplica[] {
  const out: ListedReplica[] = [];
  for (const [key, value] of info) {
    if (!/^slave\d+$/.test(key)) continue;
    const f = parseInfoFields(value);
    const host = f.get("ip");
    const port = Number(f.get("port"));
    if (host === undefined || !Number.isInteger(port)) continue;
    const offset = Number(f.get("offset"));
    out.push({
      address: endpointKey({ host, port }),
      endpoint: { host, port },
      state: f.get("state"),
      offset: Number.isFinite(offset) ? offset : undefined,
    });
  }
  return out;
}

/** Where the replicas' reports are measured from: the primary's zone and offset, the captures, the lag limit. */
interface ReplicaContext {
  zoneOf: (address: string) => string | undefined;
  primaryZone: string | undefined;
  primaryOffset: number | undefined;
  captures: Map<string, NodeCapture>;
  limit: number;
  failures: FailureList;
}

/** The seed is not a primary: NOT_PRIMARY, naming the primary it follows. */
function notPrimaryReport(
  c: ReplicationCapture,
  info: Map<string, string>,
  role: string | undefined,
  ctx: AnalysisContext,
): TopologyReport {
  const failures = new FailureList();
  const notes: string[] = [];
  const primary = info.has("master_host")
    ? `${info.get("master_host")}:${info.get("master_port") ?? "?"}`
    : "an unknown primary";
  failures.add(
    "NOT_PRIMARY",
    `seed ${c.seed} is not a primary (role:${role ?? "?"}); it replicates from ${primary} (master_link_status:${info.get("master_link_status") ?? "?"}) — point --seed at the primary`,
    c.seed,
  );
  return finishReport({ mode: "replication", shards: [], nodeCount: 1, seed: c.seed }, failures, notes, ctx.zones);
}

/** Why a listed replica's link counts as down (none: up). */
function linkDownReasons(l: ListedReplica, cap: NodeCapture | undefined): string[] {
  const rinfo = cap?.replicationInfo;
  const reasons: string[] = [];
  if (l.state !== "online") reasons.push(`the primary lists it state=${l.state ?? "?"}`);
  if (cap?.error !== undefined) reasons.push(`not reachable from the verifier (${cap.error})`);
  else if (rinfo !== undefined && infoValue(rinfo, "master_link_status") !== "up") {
    reasons.push(`it reports master_link_status:${infoValue(rinfo, "master_link_status") ?? "?"}`);
  } else if (rinfo === undefined) reasons.push("no INFO replication from it");
  return reasons;
}

/** A replica the primary lists: its link (REPLICA_LINK_DOWN) and lag (REPLICA_LAG). */
function listedReplicaReport(l: ListedReplica, r: ReplicaContext): ReplicaReport {
  const { primaryZone, primaryOffset, limit, failures } = r;
  const cap = r.captures.get(l.address);
  const rinfo = cap?.replicationInfo;
  const reasons = linkDownReasons(l, cap);
  const linkUp = reasons.length === 0;
  if (!linkUp) failures.add("REPLICA_LINK_DOWN", `replica ${l.address}: ${reasons.join("; ")}`, l.address);
  const zone = r.zoneOf(l.address);
  const report: ReplicaReport = {
    address: l.address,
    zone,
    crossAz: primaryZone !== undefined && zone !== undefined && zone !== primaryZone,
    linkUp,
  };
  const rOffset = replicationOffset(rinfo) ?? l.offset;
  if (primaryOffset !== undefined && rOffset !== undefined) {
    report.lagBytes = Math.max(0, primaryOffset - rOffset);
    if (report.lagBytes > limit) {
      failures.add(
        "REPLICA_LAG",
        `replica ${l.address} is ${report.lagBytes} bytes behind the primary (limit ${limit})`,
        l.address,
      );
    }
  }
  return report;
}

/**
 * Seeds given beyond the primary that it does not list: REPLICA_LINK_DOWN; the ones that are not primaries count as
 * down replicas.
 */
function unlistedSeedReplicas(
  c: ReplicationCapture,
  listed: readonly ListedReplica[],
  r: ReplicaContext,
): ReplicaReport[] {
  const { primaryZone, failures } = r;
  const replicas: ReplicaReport[] = [];
  const listedSet = new Set(listed.map((l) => l.address));
  for (const address of c.extraSeeds ?? []) {
    if (listedSet.has(address) || address === c.seed) continue;
    const cap = r.captures.get(address);
    const rinfo = cap?.replicationInfo === undefined ? undefined : parseInfo(cap.replicationInfo);
    let why: string;
    if (cap?.error !== undefined) why = `not reachable from the verifier (${cap.error})`;
    else if (rinfo?.get("role") === "master") why = "is a primary itself, not a replica";
    else
      why = `replicates from ${rinfo?.get("master_host") ?? "?"}:${rinfo?.get("master_port") ?? "?"} (master_link_status:${rinfo?.get("master_link_status") ?? "?"})`;
    failures.add(
      "REPLICA_LINK_DOWN",
      `seed ${address} is not a replica of ${c.seed} (the primary does not list it): ${why}`,
      address,
    );
    if (rinfo?.get("role") !== "master") {
      const zone = r.zoneOf(address);
      replicas.push({
        address,
        zone,
        crossAz: primaryZone !== undefined && zone !== undefined && zone !== primaryZone,
        linkUp: false,
      });
    }
  }
  return replicas;
}

/**
 * REPLICA_COUNT against the expectation, else NO_REPLICAS for a primary without any; a note on an expected primary
 * count other than 1.
 */
function checkReplicaCount(
  c: ReplicationCapture,
  ctx: AnalysisContext,
  listedCount: number,
  failures: FailureList,
  notes: string[],
): void {
  const expected = ctx.expect?.replicas ?? ctx.expect?.replicasPerPrimary;
  if (expected !== undefined && expected !== listedCount) {
    failures.add("REPLICA_COUNT", `the primary ${c.seed} has ${listedCount} replica(s), expected ${expected}`, c.seed);
  }
  if (expected === undefined && listedCount === 0) {
    failures.add(
      "NO_REPLICAS",
      `the primary ${c.seed} has no replica: losing it loses every write (--expect-replicas 0 if that is intended)`,
      c.seed,
    );
  }
  if (ctx.expect?.primaries !== undefined && ctx.expect.primaries !== 1) {
    notes.push(`expected ${ctx.expect.primaries} primaries, but a replication set has exactly one`);
  }
}

export function analyseReplication(
  c: ReplicationCapture,
  ctx: AnalysisContext & { replicaLagBytes?: number },
): TopologyReport {
  const info = parseInfo(c.seedReplicationInfo);
  const role = info.get("role");
  if (role !== "master") return notPrimaryReport(c, info, role, ctx);
  const failures = new FailureList();
  const notes: string[] = [];

  const zoneOf = (address: string): string | undefined => ctx.zones?.get(address);
  const primaryZone = zoneOf(c.seed);
  const r: ReplicaContext = {
    zoneOf,
    primaryZone,
    primaryOffset: replicationOffset(c.seedReplicationInfo),
    captures: new Map(c.replicas.map((x) => [x.address, x])),
    limit: ctx.replicaLagBytes ?? DEFAULT_REPLICA_LAG_BYTES,
    failures,
  };
  const listed = listedReplicas(info);
  const replicas: ReplicaReport[] = listed.map((l) => listedReplicaReport(l, r));
  replicas.push(...unlistedSeedReplicas(c, listed, r));
  checkReplicaCount(c, ctx, listed.length, failures, notes);

  const shards = [
    { primary: { address: c.seed, zone: primaryZone, slotRanges: [], slotCount: 0, keys: c.seedDbsize }, replicas },
  ];
  const up = new Set(replicas.filter((x) => x.linkUp).map((x) => x.address));
  checkZones(shards, ctx.zones, (a) => up.has(a), failures, notes, true);
  return finishReport(
    { mode: "replication", shards, nodeCount: 1 + replicas.length, seed: c.seed },
    failures,
    notes,
    ctx.zones,
  );
}
