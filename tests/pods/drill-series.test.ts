/**
 * The drill table on real pods, N runs per fault (opt-in: it takes N `up`s per mode). The byo
 * stack of each mode on kube:local at the deployed clocks (failure detection 5 s) and the deployed load length
 * (drills.loadS's default; VBENCH_POD_DRILL_LOAD_S overrides it, and an outage longer than the load is then marked
 * open, a lower bound), the drills of
 * VBENCH_POD_DRILL_FAULTS (default primary, switchover, crash-restart) run by the first `up` and
 * again by each further `up` with a new `drills.runId`, until every fault has VBENCH_POD_DRILL_RUNS
 * rows. Every row must be `ok` (healed, no unexpected reply, no WAIT-confirmed write lost,
 * acknowledged loss within its bound); the file prints each run and the median and max per fault,
 * and writes every row to results/pods-drill-series-<mode>.json.
 *
 *   VBENCH_POD_DRILL_RUNS=5 [VBENCH_POD_DRILL_MODES=replication,cluster] \
 *     [VBENCH_POD_DRILL_FAULTS=primary,switchover] [VBENCH_POD_DRILL_LOAD_S=40] bash .ci/setup --pods \
 *     npx vitest run --project pods \
 *     tests/pods/drill-series.test.ts
 *
 * VBENCH_POD_DRILL_KEEP_LOGS=1 saves every pod's logs (and each member's preStop log from its data volume) after each
 * `up` (results/pods-drill-series-<mode>-logs/run-<n>);
 * a failed `up` saves them anyway.
 *
 * Without VBENCH_POD_DRILL_RUNS it is skipped, naming the variable (CI runs the one-run drills of
 * byo-stack.test.ts instead).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { FAULTS, type Fault } from "../../vocabulary/faults.js";
import { formatFailureKinds } from "../../core/drill/drill-table.js";
import type { FailureKind } from "../../core/drill/ledger.js";
import { createStack, tail } from "../e2e/support/pulumi-harness.js";
import { explainFailedDrills, savePodLogs } from "./support/pod-logs.js";
import { podsSkipReason, podsStackConfig, usePodsCluster, type PodsContext } from "./support/byo-on-pods.js";
import { detectionSettings, drillConfig } from "./support/drill-checks.js";

interface SeriesRow {
  mode: string;
  fault: string;
  ok: boolean;
  failures: string[];
  faultAt: string;
  writeOutageMs: number;
  writeOutageOpen?: boolean;
  aggregateOutageMs: number;
  recoveryMs: number | null;
  detectionMs: number | null;
  lostAckedWrites: number;
  lostWaitedWrites: number;
  unexpectedReplies: number;
  ackedWrites: number;
  streams: Array<{ stream: string; writeOutageMs: number; lostAckedWrites: number; failureKinds?: FailureKind[] }>;
  shards: Array<{ shard: string; outageMs: number; affected?: boolean }>;
  failoverSteps?: Record<string, unknown>;
  clusterRoles?: Array<{ t: number; node: string; role: string; seenBy: string }>;
}

const runs = Number(process.env.VBENCH_POD_DRILL_RUNS ?? "0");
const seriesLoadS = Number(process.env.VBENCH_POD_DRILL_LOAD_S ?? parseStackConfig({}).config.drills.loadS);
if (!Number.isInteger(seriesLoadS) || seriesLoadS < 1)
  throw new Error(`VBENCH_POD_DRILL_LOAD_S: a whole number of seconds ≥ 1, got ${process.env.VBENCH_POD_DRILL_LOAD_S}`);
const modes = (process.env.VBENCH_POD_DRILL_MODES ?? "replication,cluster").split(",") as Array<
  "cluster" | "replication"
>;
/** VBENCH_POD_DRILL_KEEP_LOGS=1: every pod's logs after every `up` too, not only after a failed one. */
const keepLogs = process.env.VBENCH_POD_DRILL_KEEP_LOGS === "1";
const faults = (process.env.VBENCH_POD_DRILL_FAULTS ?? "primary,switchover,crash-restart").split(",") as Fault[];
const optIn = Number.isInteger(runs) && runs >= 1 ? "" : "set VBENCH_POD_DRILL_RUNS=<runs per fault> to run";
for (const f of faults) if (!FAULTS.includes(f)) throw new Error(`VBENCH_POD_DRILL_FAULTS: no fault ${f}`);
const reason = optIn || podsSkipReason({ pulumi: true });

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Cluster: the primaries the poll right before the fault saw, then every role change in the first 10 s. */
function rolesText(r: SeriesRow): string {
  if (r.clusterRoles === undefined) return "";
  const pod = (node: string): string => node.split(".")[0]!;
  const before = r.clusterRoles.filter((x) => x.t <= 0 && x.role === "master").map((x) => pod(x.node));
  const moves = r.clusterRoles.filter((x) => x.t > 0 && x.t <= 10_000).map((x) => `${x.t} ${pod(x.node)} ${x.role}`);
  return ` primaries at the fault ${before.join(",")}; roles then ${moves.join(", ") || "unchanged"}`;
}

/**
 * One line per row: the outage (cluster: the affected shard's), each stream's, losses, recovery, the Sentinels' steps,
 * the cluster's roles.
 */
function rowLine(r: SeriesRow, run: number): string {
  const streams = r.streams.map((s) => `${s.stream} ${s.writeOutageMs}`).join(", ");
  const steps = r.failoverSteps ? ` steps ${JSON.stringify(r.failoverSteps)}` : rolesText(r);
  const why = formatFailureKinds(r.streams);
  return (
    `  run ${run} ${r.fault}: outage ${r.writeOutageOpen === true ? "≥ " : ""}${r.writeOutageMs} ms (aggregate ${r.aggregateOutageMs}; ${streams}), ` +
    `recovery ${r.recoveryMs} ms, detection ${r.detectionMs} ms, acked lost ${r.lostAckedWrites}/${r.ackedWrites}, ` +
    `WAIT-confirmed lost ${r.lostWaitedWrites}, unexpected ${r.unexpectedReplies}${r.ok ? "" : ` FAILED ${r.failures.join("; ")}`}${steps}` +
    (why === "" ? "" : `\n    why writes failed: ${why}`)
  );
}

/** Every pod's logs of `ns` into `dir` (support/pod-logs.ts), for a failed `up` or every run with keepLogs. */
const saveLogs = (ctx: PodsContext, ns: string, dir: string): Promise<unknown> =>
  savePodLogs(ctx.api, ctx.cluster.kubeconfig, ns, dir);

describe.skipIf(reason !== "")(`drill series on real pods${reason ? ` (skipped: ${reason})` : ""}`, () => {
  const ctx = usePodsCluster();

  for (const mode of modes) {
    it(
      `${mode}: ${faults.join(", ")}, ${runs} runs each at the deployed clocks: every row ok, median and max printed`,
      async () => {
        const NS = `valkey-${mode}-series-pods`;
        const base = podsStackConfig(ctx.cluster, mode, NS, {
          // No benchmark: the default workload fills these small pods' maxmemory (its Job fails with OOM).
          benchmark: { enabled: false },
          // The deployed default load length (90 s): a shorter load cuts the longer outages (all, zone) at its end.
          drills: { ...drillConfig(ctx.cluster), faults, runId: "series-1", loadS: seriesLoadS },
        });
        const valkey = detectionSettings(mode, base.valkey as Record<string, unknown>);
        const s = await createStack(ctx.env, { ...base, valkey }, { password: "series-secret-pw" });
        const rows: Array<SeriesRow & { run: number }> = [];
        try {
          for (let run = 1; run <= runs; run++) {
            if (run > 1)
              await s.stack.setConfig("valkey-on-eks:drills", {
                value: JSON.stringify({ ...(base.drills as object), runId: `series-${run}` }),
              });
            const t0 = Date.now();
            const up = await s.stack.up({ onOutput: (o) => s.log.push(o) }).catch(async (e: unknown) => {
              await saveLogs(ctx, NS, `results/pods-drill-series-${mode}-logs`).catch((why: unknown) =>
                console.log(`[pods series] ${NS}: the pods' logs could not be saved: ${String(why)}`),
              );
              throw e;
            });
            expect(up.summary.result, tail(s.log)).toBe("succeeded");
            if (keepLogs) await saveLogs(ctx, NS, `results/pods-drill-series-${mode}-logs/run-${run}`);
            const report = up.outputs.report?.value as { drills: SeriesRow[] | null };
            const got = report.drills ?? [];
            expect(
              got.map((r) => r.fault),
              tail(s.log),
            ).toEqual(faults);
            await explainFailedDrills(
              ctx.api,
              ctx.cluster.kubeconfig,
              NS,
              got,
              `results/pods-drill-series-${mode}-logs/run-${run}-failed`,
            );
            for (const r of got) rows.push({ ...r, run });
            console.log(
              `[pods series] ${mode} run ${run} (${Math.round((Date.now() - t0) / 1000)} s):\n${got.map((r) => rowLine(r, run)).join("\n")}`,
            );
          }
        } finally {
          mkdirSync("results", { recursive: true });
          writeFileSync(`results/pods-drill-series-${mode}.json`, `${JSON.stringify(rows, null, 2)}\n`);
          await s.dispose();
        }
        const summary = faults.map((f) => {
          const of = rows.filter((r) => r.fault === f);
          const outage = of.map((r) => r.writeOutageMs);
          const open = of.filter((r) => r.writeOutageOpen === true).length;
          const bound = open === 0 ? "" : ` (${open} ran to the load's end: lower bounds)`;
          return `  ${f}: outage median ${median(outage)} ms, max ${Math.max(...outage)} ms over ${of.length} runs${bound}; acked lost ${of.map((r) => r.lostAckedWrites).join("/")}; WAIT-confirmed lost ${of.reduce((a, r) => a + r.lostWaitedWrites, 0)}; unexpected ${of.reduce((a, r) => a + r.unexpectedReplies, 0)}`;
        });
        console.log(`[pods series] ${mode}, ${runs} runs per fault:\n${summary.join("\n")}`);
        for (const r of rows) {
          const what = rowLine(r, r.run);
          expect([r.ok, r.lostWaitedWrites, r.unexpectedReplies], what).toEqual([true, 0, 0]);
        }
        expect(rows).toHaveLength(runs * faults.length);
      },
      runs * faults.length * 300_000 + 900_000,
    );
  }
});
