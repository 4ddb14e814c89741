/**
 * Measures what a primary crash costs a client of the HAProxy write endpoint: on a local
 * Sentinel topology (real processes: members started by the rendered start script, 3
 * Sentinels, HAProxy), a client writes back to back through the write endpoint; the primary
 * is SIGKILLed; printed: time to the Sentinels' promotion and to the first acknowledged write
 * through the endpoint. The killed member is restarted (same data dir, same start script) and
 * rejoins as a replica before the next run.
 *
 *   bash .ci/setup npx tsx apps/perf/failover-perf.ts [--runs 3] [--down-after-ms 5000]
 *       [--failover-timeout-ms 10000] [--replicas 2] [--check-interval-ms 500] [--sentinel-interval-ms N] [--json]
 *
 * Also printed: when a majority of the Sentinels first named the new primary (every Sentinel asked every 10 ms over
 * open connections) and the endpoint's first write after that moment, which is HAProxy's own share of the outage
 * (its checks of the Sentinels and of the promoted member: `--sentinel-interval-ms` sets how often a Sentinel's server
 * that names a member is checked, haproxy-cfg.ts `sentinelIntervalMs`).
 */
import { parseArgs } from "node:util";
import { waitForReplicaLinks } from "../../harness/local/local-replication.js";
import { killHard, SentinelTopology, type Member } from "../../harness/local/sentinel-topology.js";
import { WriteProbe } from "../../harness/local/write-probe.js";
import { namedByMajority } from "../../harness/local/endpoint-landing.js";
import { wholeFlag } from "./perf-args.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { openClient } from "../../core/topology/connector.js";
import { endpointKey } from "../../vocabulary/endpoint.js";
import { spreadOf } from "../../benchmarks/scale/scale-fit.js";

interface RunResult {
  run: number;
  killed: string;
  promoted: string;
  /** SIGKILL -> the Sentinels name another primary. */
  promotionMs: number;
  /** SIGKILL -> a majority of the Sentinels name the promoted member. */
  majorityMs: number;
  /** SIGKILL -> first write acknowledged through the write endpoint. */
  firstWriteMs: number;
  failedWrites: number;
}

/** The script's flags, with their defaults. */
interface FailoverPerfFlags {
  runs: number;
  downAfterMs: number;
  failoverTimeoutMs: number;
  checkIntervalMs: number;
  /** HAProxy's check interval of a Sentinel's server while UP; undefined = haproxy-cfg.ts's default. */
  sentinelIntervalMs: number | undefined;
  replicas: number;
  json: boolean | undefined;
}

async function main(): Promise<void> {
  const flags = parseFlags();
  const { downAfterMs, failoverTimeoutMs, checkIntervalMs, replicas } = flags;
  const password = `perf-${Math.random().toString(36).slice(2)}`;
  const t = await SentinelTopology.start({
    replicas,
    zones: ["a", "b", "c"],
    password,
    downAfterMs,
    failoverTimeoutMs,
    checkIntervalMs,
    ...(flags.sentinelIntervalMs === undefined ? {} : { haproxy: { sentinelIntervalMs: flags.sentinelIntervalMs } }),
  });
  const results: RunResult[] = [];
  try {
    for (let run = 1; run <= flags.runs; run++) {
      const killed = t.member(await t.primaryFromSentinels());
      results.push(await measureFailover(t, killed, password, run, flags));
      await rejoin(t, killed, password);
    }
  } finally {
    await t.stopAll();
  }
  printResults(flags, results);
}

function parseFlags(): FailoverPerfFlags {
  const { values } = parseArgs({
    options: {
      "runs": { type: "string" },
      "down-after-ms": { type: "string" },
      "failover-timeout-ms": { type: "string" },
      "replicas": { type: "string" },
      "check-interval-ms": { type: "string" },
      "sentinel-interval-ms": { type: "string" },
      "json": { type: "boolean" },
    },
  });
  return {
    runs: wholeFlag("runs", values.runs, 3),
    downAfterMs: wholeFlag("down-after-ms", values["down-after-ms"], 5000),
    failoverTimeoutMs: wholeFlag("failover-timeout-ms", values["failover-timeout-ms"], 10_000),
    checkIntervalMs: wholeFlag("check-interval-ms", values["check-interval-ms"], 500),
    sentinelIntervalMs:
      values["sentinel-interval-ms"] === undefined
        ? undefined
        : wholeFlag("sentinel-interval-ms", values["sentinel-interval-ms"], 0),
    replicas: wholeFlag("replicas", values.replicas, 2),
    json: values.json,
  };
}

/**
 * One run: writes through the endpoint, SIGKILL of the primary `killed`, then the promotion and the first write after
 * it.
 */
async function measureFailover(
  t: SentinelTopology,
  killed: Member,
  password: string,
  run: number,
  flags: FailoverPerfFlags,
): Promise<RunResult> {
  const probe = new WriteProbe(t.proxy!.write, password, `perf${run}`).start();
  let promoted = killed.address;
  try {
    await pollUntil(() => Promise.resolve(probe.acked.length >= 100 ? true : `${probe.acked.length} writes`), {
      timeoutMs: 15_000,
      what: "writes through the endpoint",
    });
    const errorsBefore = probe.errors;
    const majority = watchSentinelMajority(t, password, killed.address);
    const killedAt = Date.now();
    const mark = probe.mark();
    await killHard(killed.proc);
    await pollUntil(
      async () => {
        promoted = await t.primaryFromSentinels().catch(() => killed.address);
        return promoted !== killed.address ? true : "no promotion yet";
      },
      { timeoutMs: flags.downAfterMs + flags.failoverTimeoutMs + 30_000, intervalMs: 20, what: "a promotion" },
    );
    const promotionMs = Date.now() - killedAt;
    await pollUntil(
      () =>
        Promise.resolve(
          probe.firstAckAfter(mark)
            ? true
            : `no write since the kill (${probe.errors} errors, last: ${probe.lastError ?? "none"}; ${probe.acked.length} acked)`,
        ),
      { timeoutMs: 30_000, intervalMs: 20, what: "a write through the endpoint" },
    );
    const first = probe.firstAckAfter(mark)!;
    const majorityAt = await majority.at;
    return {
      run,
      killed: killed.address,
      promoted,
      promotionMs,
      majorityMs: majorityAt - killedAt,
      firstWriteMs: first.at - killedAt,
      failedWrites: probe.errors - errorsBefore,
    };
  } finally {
    await probe.stop();
  }
}

/**
 * Asks every Sentinel for the primary every 10 ms over open connections (endpoint-landing.ts `sentinelVotes` opens
 * one per ask); `at` = Date.now() when a majority (⌊S/2⌋+1) first name one member other than `old` (namedByMajority;
 * rejects after 60 s).
 */
function watchSentinelMajority(t: SentinelTopology, password: string, old: string): { at: Promise<number> } {
  const at = (async () => {
    const clients = await Promise.all(
      t.sentinelEndpoints.map((s) => openClient(s.host, s.port, endpointKey(s), { password, connectTimeoutMs: 1000 })),
    );
    try {
      const need = Math.floor(clients.length / 2) + 1;
      const until = Date.now() + 60_000;
      while (Date.now() < until) {
        const named = await Promise.all(
          clients.map((c) =>
            (c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", t.masterName) as Promise<[string, string] | null>).then(
              (r) => (r === null ? undefined : endpointKey({ host: r[0], port: Number(r[1]) })),
              () => undefined,
            ),
          ),
        );
        const now = Date.now();
        if (namedByMajority(named, old, need) !== undefined) return now;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no Sentinel majority named a primary other than ${old} within 60 s`);
    } finally {
      for (const c of clients) c.disconnect();
    }
  })();
  at.catch(() => undefined);
  return { at };
}

/** The killed member restarted (same data dir, same start script) and back as a replica the Sentinels all see. */
async function rejoin(t: SentinelTopology, killed: Member, password: string): Promise<void> {
  await t.startMember(killed.ordinal);
  await waitForReplicaLinks([killed], password, 30_000);
  await t.waitForSentinelViews();
}

/** The results as JSON (--json), or a header line and a line per run. */
function printResults(flags: FailoverPerfFlags, results: RunResult[]): void {
  const { downAfterMs, failoverTimeoutMs, checkIntervalMs, sentinelIntervalMs, replicas } = flags;
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ downAfterMs, failoverTimeoutMs, checkIntervalMs, sentinelIntervalMs, replicas, results }, null, 2)}\n`,
    );
    return;
  }
  process.stdout.write(
    `failover: SIGKILL of the primary -> first write through the HAProxy write endpoint (down-after ${downAfterMs} ms, failover-timeout ${failoverTimeoutMs} ms, health check every ${checkIntervalMs} ms, 1+${replicas} members, 3 Sentinels, quorum 2)\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `run ${r.run}: killed ${r.killed}, promoted ${r.promoted} after ${r.promotionMs} ms, a Sentinel majority named it after ${r.majorityMs} ms, first write after ${r.firstWriteMs} ms (${r.failedWrites} failed attempts): the endpoint ${r.firstWriteMs - r.majorityMs} ms after the majority\n`,
    );
  }
  const lag = spreadOf(results.map((r) => r.firstWriteMs - r.majorityMs));
  process.stdout.write(
    `the endpoint after the Sentinel majority (HAProxy's share; Sentinel servers checked every ${flags.sentinelIntervalMs ?? "default"} ms while up): median ${lag.median} ms, ${lag.min}–${lag.max} ms over ${results.length} runs\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`failover-perf: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
