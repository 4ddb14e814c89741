/**
 * Where new write-endpoint connections land while a demoted-late old primary still says
 * `role:master` (pod/haproxy-cfg.ts), on a local Sentinel topology (real members
 * through the rendered start script, 3 Sentinels, real HAProxy checking every 500 ms). Each run:
 * the primary is frozen (SIGSTOP) until a majority of the Sentinels name another member, then
 * thawed (SIGCONT): it comes back
 * reporting `role:master` until a Sentinel re-points it (seconds later). During that window a new
 * client connects through the write endpoint every `--every-ms` and asks `INFO server` which
 * member it reached; a connection that lands on the old primary writes to a member the Sentinels
 * no longer name.
 *
 *   bash .ci/setup npx tsx apps/perf/old-primary-perf.ts [--runs 3] [--every-ms 100] [--json]
 */
import { parseArgs } from "node:util";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { freezeUntilFailover, landing, type Landing } from "../../harness/local/endpoint-landing.js";
import { wholeFlag } from "./perf-args.js";
import { sleep } from "../../core/util/poll-until.js";

interface Figures {
  run: number;
  /** New connections opened while the thawed old primary reported role:master. */
  whileOldSaidMaster: number;
  /** ...of which landed on the old primary. */
  onOldPrimary: number;
  /** When those were opened, ms after the Sentinel majority named the new primary. */
  onOldAtMs: number[];
  onNamedPrimary: number;
  /** Refused / closed / failed connections. */
  failed: number;
  /** When those were opened, ms after the Sentinel majority named the new primary. */
  failedAtMs: number[];
  /** How long the thawed old primary reported role:master, ms. */
  windowMs: number;
}

async function measure(t: SentinelTopology, password: string, run: number, everyMs: number): Promise<Figures> {
  await t.waitForSentinelViews();
  const { old, named, majorityAt: thawedAt } = await freezeUntilFailover(t, password);
  const samples: Landing[] = [];
  // Until the old primary stops saying role:master (a Sentinel re-points it), bounded.
  while (Date.now() - thawedAt < 30_000) {
    const oldRole = await t.role(old).catch(() => undefined);
    if (oldRole !== "master") break;
    samples.push(await landing(t.proxy!.write, password));
    await sleep(everyMs);
  }
  const windowMs = Date.now() - thawedAt;
  return {
    run,
    whileOldSaidMaster: samples.length,
    onOldPrimary: samples.filter((s) => s.port === old.port).length,
    onOldAtMs: samples.filter((s) => s.port === old.port).map((s) => s.at - thawedAt),
    onNamedPrimary: samples.filter((s) => s.port === named.port).length,
    failed: samples.filter((s) => s.port === undefined).length,
    failedAtMs: samples.filter((s) => s.port === undefined).map((s) => s.at - thawedAt),
    windowMs,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { "runs": { type: "string" }, "every-ms": { type: "string" }, "json": { type: "boolean" } },
  });
  const runs = wholeFlag("runs", values.runs, 3);
  const everyMs = wholeFlag("every-ms", values["every-ms"], 100);
  const password = `perf-${Math.random().toString(36).slice(2)}`;
  const results: Figures[] = [];
  const t = await SentinelTopology.start({
    replicas: 2,
    zones: ["a", "b", "c"],
    password,
    downAfterMs: 1000,
    failoverTimeoutMs: 3000,
  });
  try {
    for (let run = 1; run <= runs; run++) {
      const f = await measure(t, password, run, everyMs);
      results.push(f);
      process.stderr.write(`${JSON.stringify(f)}\n`);
    }
  } finally {
    await t.stopAll();
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runs, everyMs, results }, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `new write-endpoint connections while the thawed old primary said role:master (one every ${everyMs} ms):\n`,
  );
  for (const r of results)
    process.stdout.write(
      `run ${r.run}: ${r.onOldPrimary}/${r.whileOldSaidMaster} on the old primary (at ${r.onOldAtMs.join(", ") || "-"} ms), ${r.onNamedPrimary} on the Sentinels' primary, ${r.failed} failed (at ${r.failedAtMs.join(", ") || "-"} ms) (window ${r.windowMs} ms)\n`,
    );
}

await main();
