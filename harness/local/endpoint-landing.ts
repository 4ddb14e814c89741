/**
 * Which member a NEW client of a proxied endpoint reaches, and the "demoted-late old primary"
 * fault that makes the answer matter: the primary frozen (SIGSTOP) until the Sentinels name
 * another member, then thawed, so it reports `role:master` again until a Sentinel re-points it.
 * Used by tests/pod/haproxy-quorum.test.ts and apps/perf/old-primary-perf.ts.
 */
import { openClient } from "../../core/topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil } from "../../core/util/poll-until.js";
import type { Member, SentinelTopology } from "./sentinel-topology.js";

export interface Landing {
  /** When the connection was opened (ms since the epoch). */
  at: number;
  /** `tcp_port` of the member reached; undefined when the connection failed. */
  port: number | undefined;
  error?: string;
}

/** One new connection through `endpoint`: logs in, asks `INFO server`, disconnects. */
export async function landing(endpoint: NodeEndpoint, password: string | undefined): Promise<Landing> {
  const at = Date.now();
  const c = await openClient(endpoint.host, endpoint.port, "endpoint", { password, connectTimeoutMs: 1000 }).catch(
    (err: Error) => err,
  );
  if (c instanceof Error) return { at, port: undefined, error: c.message };
  try {
    return { at, port: Number(parseInfo(await c.info("server")).get("tcp_port")) };
  } catch (err) {
    return { at, port: undefined, error: (err as Error).message };
  } finally {
    c.disconnect();
  }
}

/** What each running Sentinel names as primary (`host:port`; undefined = no answer). */
export async function sentinelVotes(
  t: SentinelTopology,
  password: string | undefined,
): Promise<(string | undefined)[]> {
  return Promise.all(
    t.sentinels
      .filter((s) => s.proc?.alive())
      .map(async (s) => {
        const c = await openClient(s.host, s.port, s.address, { password, connectTimeoutMs: 1000 }).catch(
          () => undefined,
        );
        if (c === undefined) return undefined;
        try {
          const r = (await c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", t.masterName)) as [string, string] | null;
          return r === null ? undefined : endpointKey({ host: r[0], port: Number(r[1]) });
        } catch {
          return undefined;
        } finally {
          c.disconnect();
        }
      }),
  );
}

/**
 * The member other than `old` that `need` of the Sentinels' votes name (the first other one named is the one
 * counted), or undefined.
 */
export function namedByMajority(votes: readonly (string | undefined)[], old: string, need: number): string | undefined {
  const other = votes.find((v) => v !== undefined && v !== old);
  return other !== undefined && votes.filter((v) => v === other).length >= need ? other : undefined;
}

/**
 * Freezes the Sentinels' primary until a majority of the Sentinels name another member (the
 * failover leader switches first, the others follow through its hello messages, up to 2 s later),
 * then thaws it. Returns both and when the majority was seen; the old one is running again and,
 * for seconds, still says `role:master`.
 */
export async function freezeUntilFailover(
  t: SentinelTopology,
  password: string | undefined,
  timeoutMs = 60_000,
): Promise<{ old: Member; named: Member; majorityAt: number }> {
  const old = t.member(await t.primaryFromSentinels());
  const majority = Math.floor(t.sentinels.length / 2) + 1;
  let named = old.address;
  old.proc?.signal("SIGSTOP");
  try {
    await pollUntil(
      async () => {
        const votes = await sentinelVotes(t, password);
        const other = namedByMajority(votes, old.address, majority);
        if (other !== undefined) {
          named = other;
          return true;
        }
        return `Sentinels name ${votes.map((v) => v ?? "-").join(", ")}`;
      },
      { timeoutMs, intervalMs: 50, what: "a Sentinel majority to name another member than the frozen primary" },
    );
  } finally {
    old.proc?.signal("SIGCONT");
  }
  return { old, named: t.member(named), majorityAt: Date.now() };
}
