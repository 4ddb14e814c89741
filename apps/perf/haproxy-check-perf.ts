/**
 * What the HAProxy write endpoint's health-check settings (`fall`, check interval, check
 * timeout; pod/haproxy-cfg.ts) save and cost, on a local Sentinel topology (real
 * members through the rendered start script, 3 Sentinels, real HAProxy). For each `fall` value,
 * `runs` times each:
 * - stall: the primary freezes (SIGSTOP) for `--stall-ms`, longer than the check timeout, then
 *   thaws (what a fork of a big dataset, a stop-the-world on a starved node or a slow command
 *   look like to the check). Nothing failed over; did the endpoint cut a long-lived client's
 *   connection (`on-marked-down shutdown-sessions`), and the longest gap between writes?
 * - switchover: the members' rendered preStop on the primary (pause, catch-up, SENTINEL
 *   FAILOVER, follow, unpause): the longest gap between writes through the endpoint.
 *
 *   bash .ci/setup npx tsx apps/perf/haproxy-check-perf.ts [--falls 1,2] [--runs 3]
 *       [--check-interval-ms 1000] [--check-timeout-ms 2000] [--stall-ms 2500] [--json]
 * (defaults: the pods' interval and timeout, pod/haproxy-cfg.ts; the stall outlasts the timeout)
 */
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { DEFAULT_CHECK_INTERVAL_MS, DEFAULT_CHECK_TIMEOUT_MS } from "../../pod/haproxy-cfg.js";
import { runReplicationPreStop } from "../../harness/local/replication-prestop.js";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { WriteProbe } from "../../harness/local/write-probe.js";
import { wholeFlag } from "./perf-args.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";

interface Figures {
  fall: number;
  scenario: "stall" | "switchover";
  run: number;
  /** The long-lived client's connection was closed by the endpoint. */
  sessionCut: boolean;
  /** When it was cut, ms from the stall / preStop start (negative: before it). */
  cutAtMs: number | null;
  /** Longest gap between two acknowledged writes through the endpoint, ms. */
  longestGapMs: number;
  failedWrites: number;
}

/** A client that never reconnects, like a benchmark's connection: did it survive? */
function longLived(t: SentinelTopology, password: string): { stop: () => Promise<number | null> } {
  const c = new Redis({
    ...t.proxy!.write,
    password,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  c.on("error", () => undefined);
  let cut: number | null = null;
  let stopped = false;
  c.on("close", () => {
    if (!stopped && cut === null) cut = Date.now();
  });
  const loop = (async () => {
    let n = 0;
    while (!stopped && cut === null) await c.set(`long:${n++}`, "1").catch(() => sleep(10));
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      c.disconnect();
      return cut;
    },
  };
}

async function measure(
  t: SentinelTopology,
  password: string,
  fall: number,
  scenario: Figures["scenario"],
  run: number,
  stallMs: number,
): Promise<Figures> {
  await t.waitForSentinelViews();
  const probe = new WriteProbe(t.proxy!.write, password, `hc${fall}${scenario}${run}`).start();
  const long = longLived(t, password);
  await pollUntil(() => Promise.resolve(probe.acked.length >= 50 ? true : `${probe.acked.length} writes`), {
    timeoutMs: 15_000,
    what: "writes",
  });
  const errorsBefore = probe.errors;
  const at = Date.now();
  const primary = t.member(await t.primaryFromSentinels());
  if (scenario === "stall") {
    primary.proc?.signal("SIGSTOP");
    await sleep(stallMs);
    primary.proc?.signal("SIGCONT");
  } else {
    await runReplicationPreStop(primary, password);
  }
  await sleep(5000);
  const cutAt = await long.stop();
  await probe.stop();
  const acks = probe.acked.filter((w) => w.at >= at - 1000).map((w) => w.at);
  let longestGapMs = 0;
  for (let i = 1; i < acks.length; i++)
    longestGapMs = Math.max(longestGapMs, (acks[i] as number) - (acks[i - 1] as number));
  return {
    fall,
    scenario,
    run,
    sessionCut: cutAt !== null,
    cutAtMs: cutAt === null ? null : cutAt - at,
    longestGapMs,
    failedWrites: probe.errors - errorsBefore,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      "falls": { type: "string" },
      "runs": { type: "string" },
      "check-interval-ms": { type: "string" },
      "check-timeout-ms": { type: "string" },
      "stall-ms": { type: "string" },
      "json": { type: "boolean" },
    },
  });
  const falls = (values.falls ?? "1,2").split(",").map((f) => wholeFlag("falls", f, 1));
  const runs = wholeFlag("runs", values.runs, 3);
  const checkIntervalMs = wholeFlag("check-interval-ms", values["check-interval-ms"], DEFAULT_CHECK_INTERVAL_MS);
  const checkTimeoutMs = wholeFlag("check-timeout-ms", values["check-timeout-ms"], DEFAULT_CHECK_TIMEOUT_MS);
  const stallMs = wholeFlag("stall-ms", values["stall-ms"], checkTimeoutMs + 500);
  const password = `perf-${Math.random().toString(36).slice(2)}`;
  const results: Figures[] = [];
  for (const fall of falls) {
    const t = await SentinelTopology.start({
      replicas: 2,
      zones: ["a", "b", "c"],
      password,
      downAfterMs: 5000,
      failoverTimeoutMs: 10_000,
      checkIntervalMs,
      haproxy: { fall, checkTimeoutMs },
    });
    try {
      for (let run = 1; run <= runs; run++) {
        for (const scenario of ["stall", "switchover"] as const) {
          const f = await measure(t, password, fall, scenario, run, stallMs);
          results.push(f);
          process.stderr.write(`${JSON.stringify(f)}\n`);
        }
      }
    } finally {
      await t.stopAll();
    }
  }
  const settings = { checkIntervalMs, checkTimeoutMs, stallMs, runs };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...settings, results }, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `HAProxy write endpoint: check every ${checkIntervalMs} ms, check timeout ${checkTimeoutMs} ms; stall = primary frozen ${stallMs} ms\n`,
  );
  for (const fall of falls) {
    for (const scenario of ["stall", "switchover"] as const) {
      const rs = results.filter((r) => r.fall === fall && r.scenario === scenario);
      process.stdout.write(
        `fall ${fall} ${scenario.padEnd(10)}: sessions cut ${rs.filter((r) => r.sessionCut).length}/${rs.length}; longest gap ms ${rs.map((r) => r.longestGapMs).join(", ")}; failed writes ${rs.map((r) => r.failedWrites).join(", ")}\n`,
      );
    }
  }
}

await main();
