/**
 * What the server saw of a mixed workload: `INFO commandstats` from every member before and after
 * the run, the per-command deltas, and the check that the served shares are the mix's. The same
 * snapshots carry each member's network byte counters (net-bytes.ts), whose deltas the data
 * transfer figures price (benchmarks/cost/transfer.ts). Pure except snapshotCommandstats and
 * snapshotMembers.
 *
 * Served vs replicated. A replica executes its primary's write stream, and counts those commands
 * in its own commandstats: a replica's SET calls are writes it was sent, not requests it served.
 * A read command (READ_COMMANDS: GET, LRANGE) is never in that stream, so a replica's calls of it
 * are reads it served (`--reads replicas`). Served = the primaries' calls of every command plus
 * the replicas' calls of the read commands; the replicas' calls of the other commands are
 * reported apart, as "replicated". A run that was to read from the replicas fails when the
 * replicas served (almost) none of a read command (checkReplicaReads).
 */
import { Redis } from "ioredis";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { BENCHMARK_TEST_COMMANDS, READ_COMMANDS, type MixEntry } from "../../vocabulary/workload.js";
import { parseInfo, parseInfoFields } from "../../core/topology/info.js";
import { netDelta, readNetCounters, replicasCaughtUp, type NetCounters } from "./net-bytes.js";

/** A member's per-command counters: calls, and the failed / rejected calls Valkey ≥ 7 counts apart. */
export type Commandstats = Map<string, { calls: number; failed: number; rejected: number }>;

/** Parses `INFO commandstats` (`cmdstat_get:calls=5,usec=...,failed_calls=0,rejected_calls=0`). */
export function parseCommandstats(text: string): Commandstats {
  const out: Commandstats = new Map();
  for (const [key, value] of parseInfo(text)) {
    if (!key.startsWith("cmdstat_")) continue;
    const f = parseInfoFields(value);
    out.set(key.slice("cmdstat_".length).toLowerCase(), {
      calls: Number(f.get("calls") ?? 0),
      failed: Number(f.get("failed_calls") ?? 0),
      rejected: Number(f.get("rejected_calls") ?? 0),
    });
  }
  return out;
}

/**
 * One member at one moment: commandstats, role, the primary a replica follows, the network byte counters
 * (net-bytes.ts).
 */
export interface MemberSnapshot {
  stats: Commandstats;
  primary: boolean;
  /** A replica's `master_host:master_port` (INFO replication). */
  replicaOf?: string;
  net: NetCounters | { missing: string };
  /** When the counters were read (ms, monotonic). */
  at: number;
  /** A replica that had not applied its primary's stream when read (net-bytes.ts replicasCaughtUp gave up). */
  behind?: true;
}

/** One member's commandstats, role and byte counters, read with INFO (one round trip per section group). */
export async function snapshotCommandstats(client: Redis): Promise<MemberSnapshot> {
  const stats = parseCommandstats(await client.info("commandstats"));
  const replication = parseInfo(await client.info("replication"));
  const net = await readNetCounters(client);
  const at = performance.now();
  const host = replication.get("master_host");
  const port = Number(replication.get("master_port"));
  const primary = replication.get("role") === "master";
  return {
    stats,
    primary,
    ...(primary || host === undefined ? {} : { replicaOf: endpointKey({ host, port }) }),
    net,
    at,
  };
}

/** Every member's snapshot, in `members` order; a member that does not answer fails naming it. */
export async function snapshotMembers(
  members: readonly NodeEndpoint[],
  password: string | undefined,
): Promise<MemberSnapshot[]> {
  // Replicas first apply what their primary sent: a test's stream counts in that test (bounded wait).
  const behind = new Set(await replicasCaughtUp(members, password));
  const snaps = await Promise.all(
    members.map(async (m) => {
      const c = new Redis({ host: m.host, port: m.port, password, connectTimeout: 5000, maxRetriesPerRequest: 0 });
      c.on("error", () => undefined);
      try {
        return await snapshotCommandstats(c);
      } catch (err) {
        throw new Error(`INFO commandstats from ${endpointKey(m)}: ${(err as Error).message}`, { cause: err });
      } finally {
        c.disconnect();
      }
    }),
  );
  return snaps.map((x, i): MemberSnapshot =>
    behind.has(endpointKey(members[i] as NodeEndpoint)) ? { ...x, behind: true } : x,
  );
}

/**
 * Every member's snapshot before and after each run it wraps (valkey-benchmark's runs:
 * benchmark-runner.ts `aroundRun`); `last` holds the deltas of the last run, the one a row reports.
 */
export class MemberBytesRecorder {
  last: MemberDelta[] = [];
  constructor(
    private readonly members: readonly NodeEndpoint[],
    private readonly password: string | undefined,
  ) {}
  readonly around = async <T>(run: () => Promise<T>): Promise<T> => {
    const before = await snapshotMembers(this.members, this.password);
    const value = await run();
    this.last = memberDeltas(this.members, before, await snapshotMembers(this.members, this.password));
    return value;
  };
}

/** after − before, per command (commands absent before count from 0). */
export function commandstatsDelta(before: Commandstats, after: Commandstats): Commandstats {
  const out: Commandstats = new Map();
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, failed: 0, rejected: 0 };
    const d = { calls: a.calls - b.calls, failed: a.failed - b.failed, rejected: a.rejected - b.rejected };
    if (d.calls !== 0 || d.failed !== 0 || d.rejected !== 0) out.set(name, d);
  }
  return out;
}

export interface MemberDelta {
  /** `host:port`. */
  member: string;
  primary: boolean;
  delta: Commandstats;
  /** A replica's primary at the end (`host:port` as INFO replication names it). */
  replicaOf?: string;
  /** The byte counters' after − before (net-bytes.ts); absent when a side could not read them (netMissing says why). */
  net?: NetCounters;
  netMissing?: string;
  /** Seconds between the two reads of the byte counters. */
  seconds?: number;
  /**
   * A replica behind its primary's stream at a snapshot: some of this test's stream bytes fall in a neighbouring test.
   */
  lagged?: true;
}

const NONE: Commandstats = new Map();

/**
 * Per member (in `members` order), after − before and the role at the end; byte counters when both snapshots carry
 * them.
 */
export function memberDeltas(
  members: readonly NodeEndpoint[],
  before: readonly (Partial<Pick<MemberSnapshot, "net" | "at" | "behind">> & { stats: Commandstats })[],
  after: readonly (Partial<Pick<MemberSnapshot, "net" | "at" | "replicaOf" | "behind">> & {
    stats: Commandstats;
    primary: boolean;
  })[],
): MemberDelta[] {
  return members.map((m, i) => {
    const b = before[i];
    const a = after[i];
    return {
      member: endpointKey(m),
      primary: a?.primary === true,
      delta: commandstatsDelta(b?.stats ?? NONE, a?.stats ?? NONE),
      ...(a?.replicaOf === undefined ? {} : { replicaOf: a.replicaOf }),
      ...netPart(b, a),
    };
  });
}

type NetSide = Partial<Pick<MemberSnapshot, "net" | "at" | "behind">> | undefined;

function netPart(b: NetSide, a: NetSide) {
  if (b?.net === undefined || a?.net === undefined) return {};
  if ("missing" in b.net) return { netMissing: b.net.missing };
  if ("missing" in a.net) return { netMissing: a.net.missing };
  return {
    net: netDelta(b.net, a.net),
    ...(a.at === undefined || b.at === undefined ? {} : { seconds: (a.at - b.at) / 1000 }),
    ...(a.behind || b.behind ? { lagged: true as const } : {}),
  };
}

/** One command of the mix as the server saw it. */
export interface ServedCommand {
  /** The mix's test name (`get`). */
  test: string;
  /** The commandstats name (`get`). */
  command: string;
  wantedPercent: number;
  /** Calls served: on the primaries, plus on the replicas for a read command. */
  served: number;
  /** Of `served`, the replicas' (read commands only; 0 otherwise). */
  servedByReplicas: number;
  /** served ÷ all the mix's served calls, in percent. */
  servedPercent: number;
  failed: number;
  rejected: number;
  /** Calls of a write command on the replicas (their primary's write stream; 0 for a read command). */
  replicated: number;
}

export interface ServedMix {
  commands: ServedCommand[];
  /** All the mix's served calls. */
  total: number;
  /** Calls of commands outside the mix on the primaries (the client's INFO, CLUSTER SLOTS, other clients). */
  other: Record<string, number>;
  /** Per member, as measured. */
  members: MemberDelta[];
}

/**
 * The served view as plain JSON data (each member's deltas are Maps): raw/mix-served-<mode>.json and the Job's result
 * line.
 */
export function servedJson(s: ServedMix): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(s, (_k, v: unknown) =>
      v instanceof Map ? (Object.fromEntries(v as Map<string, unknown>) as unknown) : v,
    ),
  ) as Record<string, unknown>;
}

/** Sums the members' deltas into the mix's served view (see the module comment). */
export function servedMix(mix: readonly MixEntry[], members: readonly MemberDelta[]): ServedMix {
  const sum = (primary: boolean, command: string, k: "calls" | "failed" | "rejected"): number =>
    members.filter((m) => m.primary === primary).reduce((n, m) => n + (m.delta.get(command)?.[k] ?? 0), 0);
  const mixCommands = new Set(mix.map((e) => BENCHMARK_TEST_COMMANDS[e.test]));
  const split = (command: string) => {
    const read = READ_COMMANDS.has(command);
    const onReplicas = sum(false, command, "calls");
    return {
      primaries: sum(true, command, "calls"),
      byReplicas: read ? onReplicas : 0,
      replicated: read ? 0 : onReplicas,
    };
  };
  const total = [...mixCommands].reduce((n, c) => n + split(c).primaries + split(c).byReplicas, 0);
  const commands = mix.map((e): ServedCommand => {
    const command = BENCHMARK_TEST_COMMANDS[e.test];
    const { primaries, byReplicas, replicated } = split(command);
    const read = READ_COMMANDS.has(command);
    const both = (k: "failed" | "rejected") => sum(true, command, k) + (read ? sum(false, command, k) : 0);
    return {
      test: e.test,
      command,
      wantedPercent: e.percent,
      served: primaries + byReplicas,
      servedByReplicas: byReplicas,
      servedPercent: total === 0 ? 0 : (100 * (primaries + byReplicas)) / total,
      failed: both("failed"),
      rejected: both("rejected"),
      replicated,
    };
  });
  const other: Record<string, number> = {};
  for (const m of members.filter((x) => x.primary))
    for (const [name, d] of m.delta) if (!mixCommands.has(name)) other[name] = (other[name] ?? 0) + d.calls;
  return { commands, total, other, members: [...members] };
}

/** The served mix is not the one asked for. */
export class MixMismatchError extends Error {
  constructor(
    message: string,
    readonly served: ServedMix,
  ) {
    super(message);
    this.name = "MixMismatchError";
  }
}

/**
 * Throws MixMismatchError naming every command whose served share is off the wanted one by more
 * than `tolerancePercent` percentage points, or that the server failed or rejected; and when the
 * primaries served none of the mix at all.
 */
export function checkServedMix(s: ServedMix, tolerancePercent: number): void {
  if (s.total === 0)
    throw new MixMismatchError("the servers served none of the mix's commands (INFO commandstats deltas are all 0)", s);
  const off = s.commands.flatMap((c) => {
    const out: string[] = [];
    if (Math.abs(c.servedPercent - c.wantedPercent) > tolerancePercent)
      out.push(
        `${c.test.toUpperCase()}: wanted ${c.wantedPercent}%, served ${c.servedPercent.toFixed(2)}% (${c.served} of ${s.total} calls)`,
      );
    if (c.failed + c.rejected > 0)
      out.push(`${c.test.toUpperCase()}: ${c.failed} failed and ${c.rejected} rejected calls`);
    return out;
  });
  if (off.length > 0)
    throw new MixMismatchError(
      `the server did not serve the mix asked for (tolerance ±${tolerancePercent} points, from INFO commandstats): ${off.join("; ")}`,
      s,
    );
}

/** `GET 80.00% (wanted 80%) 12345 calls, replicated 0; ...` for a row's notes and summary.md. */
export function servedNote(s: ServedMix): string {
  const other = Object.entries(s.other)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return (
    `served (INFO commandstats): ` +
    s.commands
      .map(
        (c) =>
          `${c.test.toUpperCase()} ${c.servedPercent.toFixed(2)}% (wanted ${c.wantedPercent}%) ${c.served} calls` +
          (READ_COMMANDS.has(c.command)
            ? `, by the primaries ${c.served - c.servedByReplicas}, by the replicas ${c.servedByReplicas}`
            : `, replicated ${c.replicated}`),
      )
      .join("; ") +
    (other === "" ? "" : `; other commands ${other}`)
  );
}

/**
 * A read command's replicas' share below this fails a run that was to read from the replicas:
 * every read of such a run is sent to a replica (a connection to one, the read endpoint, or a
 * READONLY cluster connection), so a share below it means the client read elsewhere.
 */
export const MIN_REPLICA_READ_SHARE = 0.9;

/** One read command's calls, as the servers counted them: the primaries', and each replica's. */
export interface ReadsServed {
  command: string;
  byPrimaries: number;
  /** `host:port` → calls, for every member that was a replica. */
  byReplica: Record<string, number>;
  byReplicas: number;
}

/** Per read command of `commands`, who served its calls (the members' deltas). */
export function readsServed(commands: readonly string[], members: readonly MemberDelta[]): ReadsServed[] {
  return [...new Set(commands)]
    .filter((c) => READ_COMMANDS.has(c))
    .map((command) => {
      const calls = (m: MemberDelta) => m.delta.get(command)?.calls ?? 0;
      const replicas = members.filter((m) => !m.primary);
      const byReplica = Object.fromEntries(replicas.map((m) => [m.member, calls(m)]));
      return {
        command,
        byPrimaries: members.filter((m) => m.primary).reduce((n, m) => n + calls(m), 0),
        byReplica,
        byReplicas: replicas.reduce((n, m) => n + calls(m), 0),
      };
    });
}

/** The replicas did not serve the reads a run sent them. */
export class ReplicaReadsError extends Error {
  constructor(
    message: string,
    readonly served: readonly ReadsServed[],
  ) {
    super(message);
    this.name = "ReplicaReadsError";
  }
}

/**
 * Throws ReplicaReadsError naming every read command the replicas served less than
 * MIN_REPLICA_READ_SHARE of (a client that silently read from the primaries), with the counts.
 */
export function checkReplicaReads(served: readonly ReadsServed[], what: string): void {
  if (served.length === 0)
    throw new ReplicaReadsError(
      `${what}: no read command was sent, so nothing could be read from the replicas`,
      served,
    );
  const off = served.flatMap((r) => {
    const all = r.byPrimaries + r.byReplicas;
    if (all > 0 && r.byReplicas >= MIN_REPLICA_READ_SHARE * all) return [];
    return [
      `${r.command.toUpperCase()}: the replicas served ${r.byReplicas} of ${all} calls, the primaries ${r.byPrimaries} (${replicaCounts(r)})`,
    ];
  });
  if (off.length > 0)
    throw new ReplicaReadsError(
      `${what} was to read from the replicas, but they served under ${Math.round(MIN_REPLICA_READ_SHARE * 100)}% of the reads (INFO commandstats): ${off.join("; ")}`,
      served,
    );
}

const replicaCounts = (r: ReadsServed): string =>
  Object.keys(r.byReplica).length === 0
    ? "no replica among the members"
    : Object.entries(r.byReplica)
        .map(([m, n]) => `${m}: ${n}`)
        .join(", ");

/** `served GET: by the primaries 0, by the replicas 123 (127.0.0.21:7001: 41, ...)` for a row's notes. */
export function readsServedNote(served: readonly ReadsServed[]): string {
  return `served (INFO commandstats): ${served.map((r) => `${r.command.toUpperCase()} by the primaries ${r.byPrimaries}, by the replicas ${r.byReplicas} (${replicaCounts(r)})`).join("; ")}`;
}

/** Replicas that served some of the reads: the "servers" a per-replica figure divides by. */
export function servingReplicas(served: readonly ReadsServed[]): number {
  return new Set(served.flatMap((r) => Object.entries(r.byReplica).flatMap(([m, n]) => (n > 0 ? [m] : [])))).size;
}
