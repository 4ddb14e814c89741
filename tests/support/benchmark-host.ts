/**
 * A parent process for the benchmark runner, for tests that check a benchmark child does not
 * outlive it: runs a long SET test with the real benchmark client against BENCH_HOST:BENCH_PORT,
 * prints `spawned <pid>` when the test's child (not the probe) starts, and with BENCH_END=exit
 * then leaves through process.exit; otherwise it waits to be signalled.
 * Run with `node --import tsx tests/support/benchmark-host.ts`.
 */
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { runWorkload } from "../../benchmarks/run/benchmark-runner.js";
import { onTerminatingSignal } from "../../core/util/process-reaper.js";

const host = process.env.BENCH_HOST;
const port = Number(process.env.BENCH_PORT);
if (host === undefined || !Number.isInteger(port)) throw new Error("benchmark-host: set BENCH_HOST and BENCH_PORT");
// As `vbench local` does: signals end the process through the reaper.
onTerminatingSignal(() => process.stderr.write("benchmark-host: signalled\n"));
let spawns = 0;
void runWorkload({
  workload: {
    name: "host",
    requests: 50_000_000,
    clients: 10,
    pipeline: 1,
    dataSize: 16,
    threads: 1,
    keyspaceLength: 1000,
    tests: ["set"],
    minDurationSeconds: 0,
    maxRequests: 50_000_000,
  },
  target: { host, port, cluster: false },
  mode: "replication",
  client: resolveBinaries().benchmark,
  serverVersion: "test",
  timestamp: "20260101-000000",
  onSpawn: (pid) => {
    spawns += 1;
    if (spawns !== 2) return; // spawn 1 is the probe
    process.stdout.write(`spawned ${pid}\n`);
    if (process.env.BENCH_END === "exit") setTimeout(() => process.exit(3), 200);
  },
});
