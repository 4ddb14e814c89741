/**
 * A member's network byte counters, read before and after a test (mix-served.ts snapshotMembers).
 * What each counter is, read from Valkey's source (src/server.c's INFO stats, src/networking.c,
 * src/replication.c of the newest snapshot we could fetch, `unstable` of 2024-10-25; the 9.1.2
 * binary prints the same fields, and tests/benchmarks/transfer.test.ts checks the split on it):
 *
 * - `total_net_input_bytes` = stat_net_input_bytes + stat_net_repl_input_bytes: every byte read
 *   from every connection; stat_net_input_bytes is what clients sent (a connection that is not
 *   this replica's link to its primary), stat_net_repl_input_bytes what the primary sent on the
 *   replication link (the stream and a full sync's RDB).
 * - `total_net_output_bytes` = stat_net_output_bytes + stat_net_repl_output_bytes: every byte
 *   written; stat_net_repl_output_bytes is what this primary wrote to its replicas.
 * - `total_net_repl_input_bytes` / `total_net_repl_output_bytes`: the replication parts alone.
 *
 * So a member's client bytes are input − repl input (received) and output − repl output (sent).
 * Those include every non-replication connection: the benchmark client, Sentinel's PING/INFO/
 * hello, HAProxy's health checks, a replica's REPLCONF ACK to its primary (about 50 bytes a
 * second) and this snapshot's own INFO (a few kB per test).
 *
 * The cluster bus is not in INFO stats (its connections are not clients): CLUSTER INFO's
 * `cluster_stats_bytes_sent` / `cluster_stats_bytes_received` (Valkey ≥ 9.0) count it; an older
 * server has only message counts, so the bus is then not measured (null).
 */
import { Redis } from "ioredis";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";

export interface NetCounters {
  /** total_net_input_bytes. */
  input: number;
  /** total_net_output_bytes. */
  output: number;
  /** total_net_repl_input_bytes: from this replica's primary. */
  replInput: number;
  /** total_net_repl_output_bytes: to this primary's replicas. */
  replOutput: number;
  /** CLUSTER INFO cluster_stats_bytes_sent; null: not cluster mode, or a server that does not count it. */
  busSent: number | null;
  /** CLUSTER INFO cluster_stats_bytes_received; null as busSent. */
  busReceived: number | null;
}

export const NET_INFO_FIELDS = {
  input: "total_net_input_bytes",
  output: "total_net_output_bytes",
  replInput: "total_net_repl_input_bytes",
  replOutput: "total_net_repl_output_bytes",
} as const;

export const BUS_INFO_FIELDS = {
  busSent: "cluster_stats_bytes_sent",
  busReceived: "cluster_stats_bytes_received",
} as const;

/**
 * The counters from `INFO stats` (and CLUSTER INFO's reply in cluster mode), or why not: a missing or non-numeric
 * field, named.
 */
export function parseNetCounters(infoStats: string, clusterInfo?: string): NetCounters | { missing: string } {
  const info = parseInfo(infoStats);
  const out: Partial<Record<keyof typeof NET_INFO_FIELDS, number>> = {};
  for (const [k, field] of Object.entries(NET_INFO_FIELDS) as [keyof typeof NET_INFO_FIELDS, string][]) {
    const n = Number(info.get(field));
    if (!info.has(field) || !Number.isSafeInteger(n) || n < 0) return { missing: `INFO stats has no ${field}` };
    out[k] = n;
  }
  const bus = clusterInfo === undefined ? undefined : parseInfo(clusterInfo);
  const busField = (f: string): number | null => {
    const n = Number(bus?.get(f));
    return bus?.has(f) && Number.isSafeInteger(n) && n >= 0 ? n : null;
  };
  return {
    ...(out as Record<keyof typeof NET_INFO_FIELDS, number>),
    busSent: busField(BUS_INFO_FIELDS.busSent),
    busReceived: busField(BUS_INFO_FIELDS.busReceived),
  };
}

/** after − before; a bus counter is null unless both sides have it. */
export function netDelta(before: NetCounters, after: NetCounters): NetCounters {
  const bus = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);
  return {
    input: after.input - before.input,
    output: after.output - before.output,
    replInput: after.replInput - before.replInput,
    replOutput: after.replOutput - before.replOutput,
    busSent: bus(after.busSent, before.busSent),
    busReceived: bus(after.busReceived, before.busReceived),
  };
}

/** Reads the counters: `INFO stats cluster`, then CLUSTER INFO when the member runs in cluster mode. */
export async function readNetCounters(client: Redis): Promise<NetCounters | { missing: string }> {
  const text = String(await client.call("info", "stats", "cluster"));
  const cluster =
    parseInfo(text).get("cluster_enabled") === "1" ? String(await client.call("cluster", "info")) : undefined;
  return parseNetCounters(text, cluster);
}

/** How long a snapshot waits for the replicas to apply what their primary has sent. */
export const CATCH_UP_MS = 5000;

/**
 * Waits (at most `timeoutMs`) until every replica among `members` has applied its primary's
 * stream up to the primary's `master_repl_offset` as read first, so a test's stream is counted in
 * that test and not in the next one (a replica still reading it when the snapshot is taken would
 * shift those bytes). A replica whose primary is not among the members follows the one primary
 * when there is one (replication reached through an endpoint). Returns the replicas still behind
 * (`host:port`), [] when all caught up.
 */
export async function replicasCaughtUp(
  members: readonly NodeEndpoint[],
  password: string | undefined,
  timeoutMs = CATCH_UP_MS,
): Promise<string[]> {
  const clients = members.map((m) => {
    const c = new Redis({ host: m.host, port: m.port, password, connectTimeout: 5000, maxRetriesPerRequest: 0 });
    c.on("error", () => undefined);
    return c;
  });
  try {
    const read = () => Promise.all(clients.map(async (c) => parseInfo(await c.info("replication"))));
    const first = await read();
    const offsets = new Map(
      first.flatMap((info, i) =>
        info.get("role") === "master"
          ? [[endpointKey(members[i] as NodeEndpoint), Number(info.get("master_repl_offset"))]]
          : [],
      ),
    );
    const only = offsets.size === 1 ? [...offsets.values()][0] : undefined;
    const target = (info: Map<string, string>): number | undefined =>
      offsets.get(endpointKey({ host: info.get("master_host") ?? "", port: Number(info.get("master_port")) })) ?? only;
    const deadline = Date.now() + timeoutMs;
    for (let infos = first; ; infos = await read()) {
      const behind = infos.flatMap((info, i) => {
        const want = info.get("role") === "slave" ? target(info) : undefined;
        return want !== undefined && Number(info.get("slave_repl_offset")) < want
          ? [endpointKey(members[i] as NodeEndpoint)]
          : [];
      });
      if (behind.length === 0 || Date.now() >= deadline) return behind;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    for (const c of clients) c.disconnect();
  }
}
