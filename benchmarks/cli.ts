/**
 * vbench: the project's command line.
 *
 *   vbench config --file stacks/Pulumi.<stack>.yaml [--json]   validate a stack's config offline
 *   vbench verify --mode cluster|replication --seed HOST:PORT  verify a live topology
 *   vbench local [options]                                     run both topologies locally and compare
 *   vbench report --from DIR|FILE [--from ...] [--output DIR]  render report.html from results, side by side
 *   vbench sweep --shards 1,2,4 [--pin] [workload flags]       shard-scaling sweep on this machine
 *   vbench bench --target HOST:PORT [--cluster] [flags]        the same pipeline against an existing endpoint
 *   vbench drill --mode cluster|replication --fault F [flags]  failure drill on a local topology
 *
 * Exit codes: 0 ok, 1 the thing checked is wrong, 2 usage or connection error.
 */
import { Command, CommanderError } from "commander";
import { registerBenchCommand } from "./cli/bench-command.js";
import { registerConfigCommand } from "./cli/config-command.js";
import { registerDrillCommand } from "./cli/drill-command.js";
import { registerLocalCommand } from "./cli/local-command.js";
import { registerReportCommand } from "./cli/report-command.js";
import { registerSweepCommand } from "./cli/sweep-command.js";
import { registerVerifyCommand } from "./cli/verify-command.js";

export function buildProgram(): Command {
  const program = new Command("vbench")
    .description("Valkey on EKS: validate stack config, verify topologies, benchmark replication vs cluster mode")
    .exitOverride()
    .showHelpAfterError(false)
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerConfigCommand(program);
  registerVerifyCommand(program);
  registerLocalCommand(program);
  registerReportCommand(program);
  registerSweepCommand(program);
  registerBenchCommand(program);
  registerDrillCommand(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error.
      return err.exitCode === 0 ? 0 : 2;
    }
    const e = err as Error & { exitCode?: number };
    process.stderr.write(`vbench: ${e.message}\n`);
    if (process.env.VBENCH_DEBUG) process.stderr.write(`${e.stack ?? ""}\n`);
    return typeof e.exitCode === "number" ? e.exitCode : 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
