/**
 * The benchmark Job's mix runner: the entry bundled into `mix.mjs` (bundle.ts) and run by the
 * Job's Node container (`node /vbench/mix.mjs`, contract in mix-job.ts). It runs runMix (through runMixComparingLoops),
 * the
 * same code as `vbench local --mix` and `vbench bench --mix` (closed or open loop, the served
 * check from every member's INFO commandstats), `workload.repeat` times (the rows are their
 * medians with min–max, every run's rows in the result's `runs`), then, with `workload.slo`
 * (`benchmark.slo`), the latency-target sweep (slo-sweep.ts, as many sweeps as runs), and prints
 * the framing of log-frames.ts:
 *
 *   ### vbench-version client=vbench mix (ioredis)
 *   ### vbench-auth method=env|none
 *   ### vbench-sample {…}          (a soak: one per sample)
 *   ### vbench-result {"rows":[…],…}
 *   ### vbench-done status=0
 *
 * Progress goes to stderr (the pod log holds both; the parser reads only frames). Exit 0 done,
 * 1 the run failed (a served mix off its shares, error replies: `### vbench-error` says which),
 * 2 the target never answered within waitSeconds (mix-job.ts), 3 the password was refused. The password
 * comes from VALKEY_PASSWORD and is never printed.
 */
import { Redis } from "ioredis";
import { FRAME_PREFIX, PASSWORD_ENV } from "./log-frames.js";
import {
  MIX_CLIENT,
  MIX_JOB_WAIT_S,
  mixJobResult,
  mixJobSettingsFromEnv,
  soakSampleLines,
  type MixJobSettings,
} from "./mix-job.js";
import { runMixComparingLoops } from "./loop-comparison.js";
import { runSloSweeps } from "./slo-sweep.js";
import { formatResultTimestamp } from "./result-row.js";
import type { MixResult } from "./mix-runner.js";
import { aggregateRuns } from "./run-spread.js";
import { runsOf } from "../../vocabulary/workload.js";
import { parseInfo } from "../../core/topology/info.js";

const frame = (kind: string, text: string): void => void process.stdout.write(`${FRAME_PREFIX}${kind} ${text}\n`);
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, " | ");

class Refused extends Error {}

/** PING (and AUTH) until the target answers, bounded; returns the server version from INFO server. */
async function reach(s: MixJobSettings, password: string | undefined): Promise<string> {
  const waitS = s.waitSeconds ?? MIX_JOB_WAIT_S;
  const deadline = Date.now() + waitS * 1000;
  let last: string;
  for (;;) {
    const c = new Redis({
      host: s.target.host,
      port: s.target.port,
      password,
      connectTimeout: 3000,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    // ioredis reports a refused AUTH as an error event, then rejects connect() with "Connection is closed".
    let event = "";
    c.on("error", (e: Error) => (event = e.message));
    try {
      await c.connect();
      const info = parseInfo(await c.info("server"));
      return info.get("valkey_version") ?? info.get("redis_version") ?? "unknown";
    } catch (err) {
      last = event === "" ? (err as Error).message : event;
      if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(last))
        throw new Refused(`the target refused the password: ${last}`);
    } finally {
      c.disconnect();
    }
    if (Date.now() >= deadline)
      throw new Error(`${s.target.host}:${s.target.port} did not answer within ${waitS} s (last: ${last})`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function main(): Promise<number> {
  const settings = mixJobSettingsFromEnv(process.env);
  const password = process.env[PASSWORD_ENV] || undefined;
  frame("version", `client=${MIX_CLIENT}`);
  frame("auth", `method=${password === undefined ? "none" : "env"}`);
  let serverVersion: string;
  try {
    serverVersion = await reach(settings, password);
  } catch (err) {
    frame("error", oneLine((err as Error).message));
    const status = err instanceof Refused ? 3 : 2;
    frame("done", `status=${status}`);
    return status;
  }
  // `workload.repeat`: the mix N times; the rows are their medians with min–max, the rest the last run's.
  const options = {
    workload: settings.workload,
    target: { ...settings.target, cluster: settings.mode === "cluster" },
    mode: settings.mode,
    serverVersion,
    password,
    timestamp: formatResultTimestamp(),
  };
  const results: MixResult[] = [];
  for (let k = 1; k <= runsOf(settings.workload); k++)
    results.push(
      await runMixComparingLoops({
        ...options,
        onProgress: (line: string) => void process.stderr.write(`run ${k}: ${line}\n`),
      }),
    );
  const last = results.at(-1) as MixResult;
  const perRun = results.map((x) => x.rows);
  const via = `${settings.mode === "cluster" ? "the client Service" : "the write Service"} ${settings.target.host}:${settings.target.port}`;
  const progress = { ...options, onProgress: (line: string) => void process.stderr.write(`${line}\n`) };
  const [sweep] =
    settings.workload.slo === undefined
      ? []
      : await runSloSweeps([{ options: progress, via }], runsOf(settings.workload));
  for (const line of soakSampleLines(last)) frame("sample", line);
  const runs = results.length > 1 ? perRun : undefined;
  frame(
    "result",
    JSON.stringify(
      mixJobResult(
        { ...last, rows: aggregateRuns(perRun) },
        { ...(runs === undefined ? {} : { runs }), ...(sweep === undefined ? {} : { sloSweep: sweep }) },
      ),
    ),
  );
  frame("done", "status=0");
  return 0;
}

/** Exits once stdout has taken every byte (the result line can be long). */
const exit = (code: number): void => void process.stdout.write("", () => process.exit(code));

main().then(exit, (err: unknown) => {
  frame("error", oneLine(err instanceof Error ? err.message : String(err)));
  frame("done", "status=1");
  exit(1);
});
