/**
 * The bytes a test moved between zones, from every member's byte counters (run/net-bytes.ts,
 * deltas over the test) and the zone of each member and of the clients. Pure.
 *
 * - Replication: what a replica read from its primary (its `total_net_repl_input_bytes`: the
 *   stream, and a full sync's RDB when one happened) crossed zones when the replica's zone is not
 *   its primary's.
 * - Client traffic: a member's client bytes (input − repl input, output − repl output) crossed
 *   zones for the share of the clients outside the member's zone. Where the clients are is an
 *   assumption, stated with every figure (config `cost.clientZones`): `spread`, the clients
 *   evenly over the deployment's zones (so (Z − 1)/Z of a member's client bytes cross), or
 *   `primary`, every client in the primary's zone (cluster mode: the zone holding the most
 *   primaries, ties to the first zone by name; a client talks to every shard's primary, so the
 *   bytes of the shards whose primary is elsewhere still cross).
 * - Cluster bus: each node's `cluster_stats_bytes_sent` over the test. Valkey counts the bus per
 *   node, not per peer, so the crossing share is the node's share of peers in other zones (its
 *   gossip picks peers at random and broadcasts reach all: the rule is stated with the figure).
 *
 * Per request: the client and replication bytes divided by the test's requests, then at the row's
 * rps (so a figure is the rate at the measured throughput, not over the snapshot's wall time);
 * the bus by the seconds between the snapshots (it runs whatever the load).
 *
 * Reads from a replica in the client's own zone: for a read test (GET, LRANGE), the bytes of the
 * reads the primaries served that would stay in the zone if each client read from a member of the
 * shard in its own zone, where the shard has one: for shard s, its primary's client bytes × (the
 * share of client zones other than the primary's − the share of client zones where s has no member).
 */
import type { MemberDelta } from "../run/mix-served.js";
import type { NetCounters } from "../run/net-bytes.js";
import type { ClientZones } from "../../vocabulary/client-zones.js";

export { CLIENT_ZONES, type ClientZones } from "../../vocabulary/client-zones.js";

/** A topology's members and zones as the verifier reported them (TopologyReport and the stack report's both fit). */
export interface ZoneTopology {
  shards: readonly {
    primary: { address: string; zone?: string | null | undefined };
    replicas: readonly { address: string; zone?: string | null | undefined }[];
  }[];
}

/** A member with its zone (and a replica's primary's zone) and its byte deltas. */
export interface PlacedMember {
  member: string;
  zone: string;
  primary: boolean;
  primaryZone?: string;
  /** The topology's shard it belongs to (index). */
  shard: number;
  net: NetCounters;
}

const host = (address: string): string => address.toLowerCase().replace(/\.(?=:\d+$)/, "");

interface Node {
  zone: string | null;
  shard: number;
  primary: boolean;
}

function nodesOf(t: ZoneTopology): Map<string, Node> {
  const out = new Map<string, Node>();
  t.shards.forEach((s, shard) => {
    out.set(host(s.primary.address), { zone: s.primary.zone ?? null, shard, primary: true });
    for (const r of s.replicas) out.set(host(r.address), { zone: r.zone ?? null, shard, primary: false });
  });
  return out;
}

/**
 * What the figures read of a member's deltas (mix-served.ts MemberDelta; the Job's result line carries the same
 * fields).
 */
export type MemberBytes = Pick<
  MemberDelta,
  "member" | "primary" | "replicaOf" | "net" | "netMissing" | "seconds" | "lagged"
>;

/**
 * Each measured member's zone from the topology, by address. A primary the client reached through
 * an endpoint (the write Service: an address the topology does not list) is the topology's
 * primary when it has one shard. Returns why not when a member has no zone or no byte counters.
 */
export function placeMembers(
  members: readonly MemberBytes[],
  t: ZoneTopology,
): { placed: PlacedMember[] } | { missing: string } {
  const nodes = nodesOf(t);
  const only = t.shards.length === 1 ? nodes.get(host(t.shards[0]?.primary.address ?? "")) : undefined;
  const placed: PlacedMember[] = [];
  for (const m of members) {
    if (m.net === undefined)
      return { missing: `${m.member}: byte counters not read (${m.netMissing ?? "no snapshot"})` };
    if ([m.net.input, m.net.output, m.net.replInput, m.net.replOutput].some((n) => n < 0))
      return { missing: `${m.member}: its byte counters went backwards over the test (restarted?)` };
    const node = nodes.get(host(m.member)) ?? (m.primary ? only : undefined);
    if (node === undefined) return { missing: `${m.member} is not in the topology report, so its zone is unknown` };
    if (node.zone === null) return { missing: `${m.member}: zone unknown in the topology report` };
    const shardPrimaryZone = t.shards[node.shard]?.primary.zone ?? null;
    const primaryZone =
      m.replicaOf === undefined ? shardPrimaryZone : (nodes.get(host(m.replicaOf))?.zone ?? shardPrimaryZone);
    if (!m.primary && primaryZone === null) return { missing: `${m.member}: its primary's zone is unknown` };
    placed.push({
      member: m.member,
      zone: node.zone,
      primary: m.primary,
      shard: node.shard,
      net: m.net,
      ...(m.primary ? {} : { primaryZone: primaryZone as string }),
    });
  }
  return { placed };
}

/** The zones the clients are in under `placement` (see the header); `zones`: the deployment's zones. */
export function clientZonesFor(placement: ClientZones, t: ZoneTopology, zones: readonly string[]): string[] {
  if (placement === "spread") return [...new Set(zones)].sort();
  const counts = new Map<string, number>();
  for (const s of t.shards) if (s.primary.zone) counts.set(s.primary.zone, (counts.get(s.primary.zone) ?? 0) + 1);
  const best = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  return best === undefined ? [] : [best[0]];
}

/** The share of the clients outside `zone`. */
export function crossingShare(zone: string, clientZones: readonly string[]): number {
  return clientZones.length === 0 ? 0 : clientZones.filter((z) => z !== zone).length / clientZones.length;
}

export interface TransferFigures {
  /** Client bytes (in + out, every member) per request. */
  clientBytesPerOp: number;
  /** Bytes the replicas read from their primaries per request. */
  replicationBytesPerOp: number;
  /** Bytes per second that crossed zones at the row's rps (the bus: over the snapshots' seconds). */
  crossZone: { client: number; replication: number; bus: number | null; total: number };
  /** How the bus figure was had, or why it is null. */
  bus: string;
  /**
   * A read test: bytes per second reads from a member in the client's own zone would keep in the zone; null otherwise.
   */
  readSaving: number | null;
}

export interface TransferInput {
  members: readonly PlacedMember[];
  topology: ZoneTopology;
  clientZones: readonly string[];
  /** Requests of the measured run (all client processes), and its rps. */
  requests: number;
  rps: number;
  /** Seconds between the snapshots (the bus); undefined when not recorded. */
  seconds: number | undefined;
  cluster: boolean;
  /** The test is a read command (its rows may price reads from a member in the client's zone). */
  read: boolean;
}

const clientBytes = (n: NetCounters): number => n.input - n.replInput + (n.output - n.replOutput);

function busFigure(i: TransferInput): { bytes: number | null; note: string } {
  if (!i.cluster) return { bytes: null, note: "no cluster bus (replication mode)" };
  const without = i.members.filter((m) => m.net.busSent === null);
  if (without.length > 0)
    return {
      bytes: null,
      note: `not measured: ${without[0]?.member} has no CLUSTER INFO cluster_stats_bytes_sent (Valkey < 9.0 counts bus messages, not bytes)`,
    };
  if (i.seconds === undefined || !(i.seconds > 0))
    return { bytes: null, note: "not measured: the snapshots' times were not recorded" };
  const zones = [...nodesOf(i.topology)].map(([address, n]) => ({ address, zone: n.zone }));
  let crossing = 0;
  for (const m of i.members) {
    const peers = zones.filter((z) => z.address !== host(m.member));
    const share = peers.length === 0 ? 0 : peers.filter((p) => p.zone !== m.zone).length / peers.length;
    crossing += (m.net.busSent as number) * share;
  }
  return {
    bytes: crossing / i.seconds,
    note: "each node's bus bytes sent × its share of peers in other zones (Valkey counts the bus per node, not per peer)",
  };
}

function readSaving(i: TransferInput): number | null {
  if (!i.read) return null;
  let bytes = 0;
  i.topology.shards.forEach((s, shard) => {
    const zones = new Set(
      [s.primary.zone, ...s.replicas.map((r) => r.zone)].filter((z): z is string => typeof z === "string"),
    );
    const uncovered =
      i.clientZones.length === 0 ? 0 : i.clientZones.filter((z) => !zones.has(z)).length / i.clientZones.length;
    for (const m of i.members.filter((x) => x.primary && x.shard === shard))
      bytes += clientBytes(m.net) * Math.max(0, crossingShare(m.zone, i.clientZones) - uncovered);
  });
  return (bytes / i.requests) * i.rps;
}

/** The figures of one measured test (see the header); throws on a run without requests. */
export function transferFigures(i: TransferInput): TransferFigures {
  if (!(i.requests > 0)) throw new RangeError(`transfer figures need the run's requests (got ${i.requests})`);
  const perOp = (bytes: number): number => bytes / i.requests;
  const client = i.members.reduce((n, m) => n + clientBytes(m.net) * crossingShare(m.zone, i.clientZones), 0);
  const replication = i.members.reduce((n, m) => n + (!m.primary && m.zone !== m.primaryZone ? m.net.replInput : 0), 0);
  const bus = busFigure(i);
  const crossZone = { client: perOp(client) * i.rps, replication: perOp(replication) * i.rps, bus: bus.bytes };
  return {
    clientBytesPerOp: perOp(i.members.reduce((n, m) => n + clientBytes(m.net), 0)),
    replicationBytesPerOp: perOp(i.members.reduce((n, m) => n + (m.primary ? 0 : m.net.replInput), 0)),
    crossZone: { ...crossZone, total: crossZone.client + crossZone.replication + (crossZone.bus ?? 0) },
    bus: bus.note,
    readSaving: readSaving(i),
  };
}

/**
 * USD per hour of `bytesPerSecond` crossing zones at `usdPerGBEachDirection` (charged leaving one zone and entering the
 * other; GB = 10⁹ bytes).
 */
export function transferUsdPerHour(bytesPerSecond: number, usdPerGBEachDirection: number): number {
  return Number(((bytesPerSecond * 3600 * 2 * usdPerGBEachDirection) / 1e9).toFixed(6));
}
