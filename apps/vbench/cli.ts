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
 *   vbench stack-sweep --stack NAME --shards 3,6,9 [--keep]    shard-scaling sweep of a deployed stack
 *   vbench aws-check --file stacks/Pulumi.<stack>.yaml [--json] before any up: the account's quota, roles, version, AMI
 *   vbench images-check --file stacks/Pulumi.<stack>.yaml       with registry access: its images, digests to pin
 *
 * Exit codes: 0 ok, 1 the thing checked is wrong, 2 usage or connection error. With `--json` an
 * error is also printed as JSON on stdout: `{ "ok": false, "error": { "code", "message", "exitCode" } }`
 * (codes: cli/errors.ts), unless the command already printed its own JSON verdict.
 */
import { Command, CommanderError } from "commander";
import { registerAwsCheckCommand } from "./aws-check-command.js";
import { registerBenchCommand } from "./bench-command.js";
import { registerConfigCommand } from "./config-command.js";
import { registerImagesCheckCommand } from "./images-check-command.js";
import { registerDrillCommand } from "./drill-command.js";
import { registerLocalCommand } from "./local-command.js";
import { registerReportCommand } from "./report-command.js";
import { registerStackSweepCommand } from "./stack-sweep-command.js";
import { registerSweepCommand } from "./sweep-command.js";
import { registerVerifyCommand } from "./verify-command.js";
import { CliError, type CliErrorCode } from "./errors.js";
import { onTerminatingSignal, signalExitCode } from "../../core/util/process-reaper.js";

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
  registerStackSweepCommand(program);
  registerAwsCheckCommand(program);
  registerImagesCheckCommand(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/** Whether `argv` runs a command that has `--json` with that flag given. */
function wantsJson(program: Command, argv: readonly string[]): boolean {
  const command = program.commands.find((c) => c.name() === argv[0]);
  return command !== undefined && command.options.some((o) => o.long === "--json") && argv.includes("--json");
}

function printJsonError(code: CliErrorCode, message: string, exitCode: number): void {
  process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message, exitCode } }, null, 2)}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = wantsJson(program, argv);
  // A run stopped by a signal (util/process-reaper.ts exits 128 + n) still ends its JSON output.
  const unhook = json
    ? onTerminatingSignal((sig) => printJsonError("INTERRUPTED", `stopped by ${sig}`, signalExitCode(sig)))
    : undefined;
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error
      // (commander has already written its message to stderr).
      if (err.exitCode === 0) return 0;
      if (json) printJsonError("USAGE", err.message.replace(/^error: /, ""), 2);
      return 2;
    }
    const e = err as Error;
    process.stderr.write(`vbench: ${e.message}\n`);
    if (process.env.VBENCH_DEBUG) process.stderr.write(`${e.stack ?? ""}\n`);
    const cli = e instanceof CliError ? e : undefined;
    const exitCode = cli?.exitCode ?? 2;
    if (json && cli?.reported !== true) printJsonError(cli?.code ?? "UNEXPECTED", e.message, exitCode);
    return exitCode;
  } finally {
    unhook?.();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
