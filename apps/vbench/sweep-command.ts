/**
 * `vbench sweep --shards 1,2,4 [--replicas-per-primary M] [--pin] [--client-processes N] [workload flags] [--json]`:
 * the shard-scaling sweep on this machine (see sweep/local-sweep.ts). Writes
 * `<output>/<timestamp>/{sweep.csv,report.html,raw/}`; prints a table (or --json) on stdout.
 * Exit 2 for bad flags and for --pin on a machine with too few CPUs, before anything starts.
 */
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { checkPin, runLocalSweep } from "./local-sweep.js";
import type { SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { parseShardList, SweepInputError } from "../../benchmarks/sweep/sweep-math.js";
import { nonNegativeInt, positiveInt, UsageError } from "./errors.js";
import { guarded } from "./guard.js";
import { addWorkloadOptions, CLIENT_PROCESSES_OPTION, workloadFromFlags, type WorkloadFlags } from "./local-command.js";

interface SweepFlags extends WorkloadFlags {
  shards: string;
  replicasPerPrimary: number;
  pin?: boolean;
  zones: string;
  ioThreads: number;
  clientProcesses: number;
  output: string;
  json?: boolean;
}

const f2 = (x: number | null) => (x === null ? "—" : x.toFixed(2));

/** The terminal table: one line per step × test. */
export function renderSweepTable(rows: readonly SweepRow[]): string {
  const header = ["test", "shards", "rps", "p50 ms", "p99 ms", "scale", "exponent", "client CPU %", ""];
  const body = rows.map((r) => [
    r.test,
    String(r.shards),
    String(Math.round(r.rps)),
    r.p50_ms.toFixed(3),
    r.p99_ms.toFixed(3),
    f2(r.scale),
    f2(r.exponent),
    r.client_cpu_pct === null ? "—" : r.client_cpu_pct.toFixed(1),
    r.client_saturated ? "client saturated" : "",
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => (b[c] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) =>
        c === 0 || c === cells.length - 1 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0),
      )
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

export async function runSweepCommand(flags: SweepFlags): Promise<void> {
  let shards: number[];
  try {
    shards = parseShardList(flags.shards);
    checkPin({ pin: flags.pin === true, shards, cpuCount: availableParallelism() });
  } catch (err) {
    if (err instanceof SweepInputError) throw new UsageError(err.message);
    throw err;
  }
  const workload = workloadFromFlags(flags);
  if (workload.mix !== undefined)
    throw new UsageError("sweep: --mix is not supported (vbench local and vbench bench run a mix)");
  if (workload.reads === "replicas")
    throw new UsageError(
      "sweep: --reads replicas is not supported (vbench local and vbench bench read from the replicas)",
    );
  const zones = flags.zones
    .split(",")
    .map((z) => z.trim())
    .filter((z) => z !== "");
  if (zones.length === 0) throw new UsageError("--zones names no zone");
  await guarded("sweep", "every server and benchmark process it started", async () => {
    const steps = (line: string) => {
      if (!flags.json) process.stderr.write(`${line}\n`);
    };
    const result = await runLocalSweep(
      {
        workload,
        shards,
        replicasPerPrimary: flags.replicasPerPrimary,
        zones,
        pin: flags.pin === true,
        outputDir: flags.output,
        ioThreads: flags.ioThreads,
        clientProcesses: flags.clientProcesses,
      },
      async (list) => {
        for (const s of list) {
          steps(s.title);
          await s.run((line) => steps(`  ${line}`));
        }
      },
    );
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ ok: true, runDir: result.runDir, report: result.reportPath, rows: result.rows }, null, 2)}\n`,
      );
    } else {
      const cpus = [...new Set(result.rows.map((r) => r.client_cpus))].join("/");
      process.stdout.write(
        `\n${renderSweepTable(result.rows)}\n\nclient CPUs: ${cpus}${flags.pin ? " (pinned)" : " (not pinned: shared with the servers)"}\nresults: ${result.runDir}/{sweep.csv, report.html, raw/}\n`,
      );
    }
  });
}

export function registerSweepCommand(program: Command): void {
  addWorkloadOptions(
    program
      .command("sweep")
      .description(
        "shard-scaling sweep on this machine: a cluster per shard count, the same workload on each; rps, p50, p99, scale and the scaling exponent per step",
      )
      .requiredOption("--shards <list>", "shard counts, strictly increasing, e.g. 1,2,4"),
    "sweep",
    "sweep.csv",
  )
    .option(
      "--replicas-per-primary <m>",
      "replicas per primary in every step",
      nonNegativeInt("--replicas-per-primary"),
      0,
    )
    .option(
      "--pin",
      "pin primary i to CPU i and the client to the CPUs left (taskset); refused when the machine has too few CPUs",
    )
    .option("--zones <csv>", "zone names assigned round-robin to the nodes", "zone-a,zone-b,zone-c")
    .option("--io-threads <n>", "valkey-server io-threads", positiveInt("--io-threads"), 1)
    .option(...CLIENT_PROCESSES_OPTION)
    .option("--output <dir>", "results root (the run writes <dir>/<timestamp>/)", "results")
    .option("--json", "print the rows and paths as JSON on stdout")
    .action(async (flags: SweepFlags) => runSweepCommand(flags));
}
