/**
 * The Sentinel side of the replication verifier: ask every given Sentinel (concurrently) who
 * the primary is, its quorum and `SENTINEL CKQUORUM`; then a PURE analysis picks the primary
 * to check and records the Sentinel failures:
 *
 * - SENTINEL_QUORUM: fewer Sentinels reachable than the quorum, or a reachable Sentinel's
 *   CKQUORUM fails (it cannot reach enough peers to authorise a failover).
 * - SENTINEL_DISAGREE: reachable Sentinels name different primaries, or one does not
 *   monitor the master name at all.
 * - SENTINEL_REPLICA_DOWN: a reachable Sentinel that names the primary does not see one of its
 *   linked replicas as up (unknown, `s_down` or `disconnected`) or as promotable (`slave-priority`
 *   0: a restarted replica before its first sync, pod/scripts/replication-start.sh; the Sentinel
 *   re-reads a replica's INFO every second, pod/sentinel-start-script.ts), so a failover it leads now (a
 *   preStop's SENTINEL FAILOVER, or a real one) could not pick that replica. Sentinel reaches a
 *   replica that came back on a new pod IP only once the DNS name resolves to it (it re-resolves on
 *   reconnect; the cluster DNS may serve the old record up to its TTL): on real pods a switchover
 *   right after such a restart found no good replica and fell back to down-after detection.
 * - SENTINEL_REPLICA_PRIORITY: the promotable replicas a Sentinel naming the primary sees run with
 *   unequal replica-priority, so a failover picks the lowest whatever its offset (a switchover
 *   preStop's steering left behind; see checkPriorities).
 * - SENTINEL_SAME_ZONE (zone map given): two Sentinels in one zone, so losing that zone can
 *   lose the quorum. A Sentinel missing from the zone map is ZONE_UNKNOWN.
 *
 * The primary checked is the one most reachable Sentinels name (ties: the first Sentinel's).
 */
import { ConnectionError, type Connector } from "../topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { FailureList } from "./analysis-common.js";
import type { SentinelReport } from "./verify-types.js";
import { flatField } from "../util/flat-field.js";

export interface SentinelCapture {
  address: string;
  endpoint: NodeEndpoint;
  /** Set when the Sentinel could not be reached (or AUTH failed). */
  error?: string;
  /** GET-MASTER-ADDR-BY-NAME: `host:port`, or null when it knows no such master. */
  primary?: string | null;
  quorum?: number;
  /** `flags` from SENTINEL MASTER, e.g. "master" or "s_down,o_down,master". */
  flags?: string;
  /** CKQUORUM reply text, or the error it returned. */
  ckquorum?: { ok: boolean; text: string };
  /**
   * SENTINEL REPLICAS: each replica it knows, `host:port` as announced, with its flags and, when
   * the reply has them, the Sentinel's view of its link (for the failure's evidence).
   */
  replicas?: ReplicaView[];
  /**
   * `sentinel_tilt:1` in INFO sentinel: its timer ran ≥ 2 s late, and for 30 s it changes no flag
   * and starts no failover (the flags it shows are as old as the TILT).
   */
  tilt?: boolean;
}

/** One replica as a Sentinel sees it. */
export interface ReplicaView {
  /** `host:port` as announced. */
  address: string;
  flags: string;
  /** The Sentinel's view of its link, as text (for the failure's evidence). */
  link?: string;
  /** `slave-priority` as the replica's last INFO told the Sentinel (0: never promoted). */
  priority?: number;
}

/** One reply entry of SENTINEL REPLICAS (a flat field/value list) as `host:port`, flags, priority and link view. */
export function replicaEntry(flat: readonly string[]): ReplicaView {
  const field = (name: string): string | undefined => flatField(flat, name);
  const priority = field("slave-priority");
  const entry: ReplicaView = {
    address: endpointKey({ host: field("ip") ?? "", port: Number(field("port")) }),
    flags: field("flags") ?? "",
    ...(priority === undefined ? {} : { priority: Number(priority) }),
  };
  const view = [
    ["last-ok-ping-reply", (v: string) => `last ok ping reply ${v} ms ago`],
    ["link-pending-commands", (v: string) => `${v} commands pending on its link`],
    ["master-link-status", (v: string) => `the replica last reported its link to the primary ${v}`],
  ] as const;
  const link = view.flatMap(([k, say]) => (field(k) === undefined ? [] : [say(field(k) as string)])).join(", ");
  return link === "" ? entry : { ...entry, link };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Asks every Sentinel; throws ConnectionError only when none can be reached. */
export async function collectSentinels(
  connector: Connector,
  endpoints: readonly NodeEndpoint[],
  masterName: string,
): Promise<SentinelCapture[]> {
  const captures = await Promise.all(
    endpoints.map(async (endpoint): Promise<SentinelCapture> => {
      const cap: SentinelCapture = { address: endpointKey(endpoint), endpoint };
      let client;
      try {
        client = await connector.connect(endpoint);
      } catch (err) {
        cap.error = message(err).replace(/^cannot reach [^:]+:\d+: /, "");
        return cap;
      }
      try {
        const addr = (await client.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName)) as [string, string] | null;
        cap.primary = addr === null ? null : endpointKey({ host: addr[0], port: Number(addr[1]) });
        if (addr !== null) {
          const flat = (await client.call("SENTINEL", "MASTER", masterName)) as string[];
          const quorum = flatField(flat, "quorum");
          if (quorum !== undefined) cap.quorum = Number(quorum);
          const flags = flatField(flat, "flags");
          if (flags !== undefined) cap.flags = flags;
          try {
            cap.ckquorum = { ok: true, text: String(await client.call("SENTINEL", "CKQUORUM", masterName)) };
          } catch (err) {
            cap.ckquorum = { ok: false, text: message(err) };
          }
          cap.replicas = ((await client.call("SENTINEL", "REPLICAS", masterName)) as string[][]).map(replicaEntry);
          cap.tilt = /^sentinel_tilt:1\s*$/m.test(String(await client.call("INFO", "sentinel")));
        }
      } catch (err) {
        cap.error = message(err);
      } finally {
        client.disconnect();
      }
      return cap;
    }),
  );
  if (captures.every((c) => c.error !== undefined)) {
    throw new ConnectionError(
      captures.map((c) => c.address).join(","),
      `no Sentinel answered: ${captures.map((c) => `${c.address}: ${c.error ?? "?"}`).join("; ")}`,
    );
  }
  return captures;
}

export interface SentinelAnalysis {
  /** The primary to check; undefined when no reachable Sentinel knows one. */
  primary: string | undefined;
  sentinels: SentinelReport[];
  failures: FailureList;
}

/** The primary most Sentinels name; ties go to the earliest-listed Sentinel's answer. */
export function chosenPrimary(captures: readonly SentinelCapture[]): string | undefined {
  const votes = new Map<string, number>();
  for (const c of captures)
    if (c.error === undefined && typeof c.primary === "string") votes.set(c.primary, (votes.get(c.primary) ?? 0) + 1);
  let best: string | undefined;
  for (const [p, n] of votes) if (best === undefined || n > (votes.get(best) ?? 0)) best = p;
  return best;
}

/** SENTINEL_QUORUM: fewer Sentinels reachable than the quorum, or a Sentinel's CKQUORUM failing. */
function checkQuorum(
  captures: readonly SentinelCapture[],
  reachable: readonly SentinelCapture[],
  masterName: string,
  failures: FailureList,
): void {
  const quorum = Math.max(0, ...reachable.map((c) => c.quorum ?? 0));
  if (quorum > 0 && reachable.length < quorum) {
    const down = captures.filter((c) => c.error !== undefined).map((c) => c.address);
    failures.add(
      "SENTINEL_QUORUM",
      `only ${reachable.length} of ${captures.length} Sentinels reachable, quorum is ${quorum} (unreachable: ${down.join(", ")})`,
    );
  }
  for (const c of reachable) {
    if (c.ckquorum !== undefined && !c.ckquorum.ok)
      failures.add(
        "SENTINEL_QUORUM",
        `Sentinel ${c.address}: SENTINEL CKQUORUM ${masterName} failed: ${c.ckquorum.text}`,
        c.address,
      );
  }
}

/** SENTINEL_DISAGREE: the reachable Sentinels name different primaries, or one does not monitor the set. */
function checkAgreement(reachable: readonly SentinelCapture[], masterName: string, failures: FailureList): void {
  const named = new Set(reachable.map((c) => c.primary).filter((p): p is string => typeof p === "string"));
  if (named.size > 1) {
    const who = reachable.map((c) => `${c.address} -> ${c.primary ?? "none"}`).join(", ");
    failures.add("SENTINEL_DISAGREE", `the Sentinels name different primaries for ${masterName}: ${who}`);
  }
  for (const c of reachable) {
    if (c.primary === null)
      failures.add("SENTINEL_DISAGREE", `Sentinel ${c.address} does not monitor ${masterName}`, c.address);
  }
}

/** SENTINEL_REPLICA_DOWN: a Sentinel naming the primary does not know a live replica, or flags it down. */
function checkReplicasSeen(
  reachable: readonly SentinelCapture[],
  primary: string | undefined,
  liveReplicas: readonly string[],
  failures: FailureList,
): void {
  for (const c of reachable.filter((x) => x.primary === primary && x.replicas !== undefined)) {
    const known = new Map((c.replicas ?? []).map((r) => [r.address.toLowerCase(), r]));
    for (const replica of liveReplicas) {
      const seen = known.get(replica.toLowerCase());
      const down =
        seen === undefined
          ? "does not know it"
          : /s_down|disconnected/.test(seen.flags)
            ? `flags it ${seen.flags}`
            : seen.priority === 0
              ? "sees replica-priority 0 (not promotable: no first sync since its restart yet, or not re-read since: up to the Sentinel's INFO period, 1 s as the start script sets it)"
              : undefined;
      if (down !== undefined)
        failures.add(
          "SENTINEL_REPLICA_DOWN",
          `Sentinel ${c.address} ${down}: replica ${replica} (a failover it leads now could not pick it)` +
            (seen?.link === undefined ? "" : `; its view: ${seen.link}`) +
            (c.tilt === true ? "; the Sentinel is in TILT (its flags stay as they were until it leaves)" : ""),
          c.address,
        );
    }
  }
}

/**
 * SENTINEL_REPLICA_PRIORITY: the replicas a Sentinel naming the primary could promote run with unequal
 * replica-priority. Sentinel picks the lowest priority before the largest offset, so a failover would
 * pick the lowest whatever it lags. The stack gives every replica the same one (replication-start.sh,
 * RELEASED_REPLICA_PRIORITY); the replication preStop steers a switchover by setting one to 1 for its
 * own run and gives it back on every way out, except when killed past the grace period. Named once per
 * replica (the first Sentinel that shows it).
 */
function checkPriorities(
  reachable: readonly SentinelCapture[],
  primary: string | undefined,
  failures: FailureList,
): void {
  const named = new Set<string>();
  for (const c of reachable.filter((x) => x.primary === primary && x.replicas !== undefined)) {
    const promotable = (c.replicas ?? []).filter(
      (r): r is ReplicaView & { priority: number } =>
        r.priority !== undefined && r.priority > 0 && !/s_down|disconnected/.test(r.flags),
    );
    const lowest = Math.min(...promotable.map((r) => r.priority));
    const others = [...new Set(promotable.filter((r) => r.priority !== lowest).map((r) => r.priority))];
    if (others.length === 0) continue;
    for (const r of promotable.filter((x) => x.priority === lowest && !named.has(x.address))) {
      named.add(r.address);
      failures.add(
        "SENTINEL_REPLICA_PRIORITY",
        `Sentinel ${c.address} sees replica ${r.address} at replica-priority ${lowest} and the other promotable ` +
          `replicas at ${others.join(", ")}: a failover picks it whatever its replication offset (a switchover ` +
          `preStop killed past its grace period leaves its steering behind); give it the others' priority ` +
          `(CONFIG SET replica-priority ${others[0]})`,
        r.address,
      );
    }
  }
}

/** ZONE_UNKNOWN for a Sentinel outside the zone map; SENTINEL_SAME_ZONE for Sentinels sharing a zone. */
function checkSentinelZones(
  captures: readonly SentinelCapture[],
  zones: Map<string, string>,
  failures: FailureList,
): void {
  const byZone = new Map<string, string[]>();
  for (const c of captures) {
    const z = zones.get(c.address);
    if (z === undefined) failures.add("ZONE_UNKNOWN", `Sentinel ${c.address} is not in the zone map`, c.address);
    else byZone.set(z, [...(byZone.get(z) ?? []), c.address]);
  }
  for (const [z, list] of byZone) {
    if (list.length > 1)
      failures.add(
        "SENTINEL_SAME_ZONE",
        `Sentinels ${list.join(", ")} share zone ${z}: losing ${z} loses ${list.length} of ${captures.length} Sentinels`,
        list[1],
      );
  }
}

/** One Sentinel as the report shows it. */
function sentinelReport(
  c: SentinelCapture,
  zones: Map<string, string> | undefined,
  primary: string | undefined,
): SentinelReport {
  const r: SentinelReport = {
    address: c.address,
    zone: zones?.get(c.address),
    reachable: c.error === undefined,
    agrees: primary !== undefined && c.primary === primary,
  };
  if (typeof c.primary === "string") r.primary = c.primary;
  if (c.quorum !== undefined) r.quorum = c.quorum;
  if (c.ckquorum !== undefined) r.ckquorum = c.ckquorum.text;
  if (c.error !== undefined) r.error = c.error;
  if (c.tilt === true) r.tilt = true;
  return r;
}

/**
 * `liveReplicas`: the primary's linked replicas (`host:port` as announced); each Sentinel naming
 * the primary must see every one of them up (SENTINEL_REPLICA_DOWN). @default none checked
 */
export function analyseSentinels(
  captures: readonly SentinelCapture[],
  masterName: string,
  zones: Map<string, string> | undefined,
  liveReplicas: readonly string[] = [],
): SentinelAnalysis {
  const failures = new FailureList();
  const primary = chosenPrimary(captures);
  const reachable = captures.filter((c) => c.error === undefined);
  checkQuorum(captures, reachable, masterName, failures);
  checkAgreement(reachable, masterName, failures);
  checkReplicasSeen(reachable, primary, liveReplicas, failures);
  checkPriorities(reachable, primary, failures);
  if (zones !== undefined) checkSentinelZones(captures, zones, failures);
  const sentinels: SentinelReport[] = captures.map((c) => sentinelReport(c, zones, primary));
  return { primary, sentinels, failures };
}
