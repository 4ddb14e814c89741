/**
 * `vbench stack-sweep --stack <name> --shards 3,6,9 [--keep] [--json] [--output DIR]` (also
 * `npm run --silent sweep:stack -- …`): the shard-scaling sweep against a deployed stack
 * (stack-sweep.ts), one `up` per shard count, then `destroy` unless --keep. Pulumi's Automation API
 * and the program are loaded only when this command runs, not by every vbench command.
 *
 * Why in apps/ and inline: the sweep drives this project's program, so it sits above stacks/ (no
 * layer below imports the program), and it runs that program inline (`LocalWorkspace.selectStack` with
 * `program: main` from stacks/index.ts) in this Node process, the same tsx loader and code as the
 * CLI's `pulumi up` runs, but without the Node language host or a second `npm install`, and with a
 * program error surfacing here as an exception. The workspace is the repository (Pulumi.yaml and
 * stacks/Pulumi.<stack>.yaml), so the stack, its backend login, secrets provider and config are
 * the user's own: the sweep's two config edits land in the stack file (`--path` edits of
 * `valkey.cluster.primaries` and `benchmark.runId`, comments kept) and are put back after the
 * destroy; with --keep they stay, matching what runs.
 *
 * Exit 0 done, 1 a step or the destroy failed, 2 bad flags or a stack the sweep refuses
 * (replication mode, shards not increasing or below what runs, invalid config at a step).
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { renderSweepTable } from "./sweep-command.js";
import { onTerminatingSignal } from "../../core/util/process-reaper.js";
import { engineErrors, parseStackShards, SweepRefused } from "./stack-sweep-plan.js";
import type { SweepStack } from "./stack-sweep.js";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

interface Flags {
  stack: string;
  shards: string;
  keep?: boolean;
  json?: boolean;
  output: string;
}

/** Selects the user's stack in this repository with the program inline. */
export async function selectProjectStack(name: string): Promise<SweepStack> {
  const { LocalWorkspace } = await import("@pulumi/pulumi/automation/index.js");
  const { default: main } = await import("../../stacks/index.js");
  try {
    return await LocalWorkspace.selectStack(
      { stackName: name, projectName: "valkey-on-eks", program: main },
      { workDir: PROJECT_ROOT },
    );
  } catch (err) {
    throw new SweepRefused(`--stack ${name}: cannot select it: ${selectFailure((err as Error).message)}`);
  }
}

/** The line of a failed `pulumi stack select` that says why (the CommandError text wraps it). */
export function selectFailure(message: string): string {
  if (/ENOENT: pulumi/.test(message))
    return "the pulumi CLI is not on PATH (install it: https://www.pulumi.com/docs/iac/download-install/)";
  return engineErrors(message)[0] ?? message.split("\n")[0] ?? "unknown error";
}

/** The command's description and flags, declared once: `vbench stack-sweep` and sweepMain both take them. */
function withStackSweepOptions(command: Command): Command {
  return command
    .description(
      "shard-scaling sweep of a deployed cluster-mode stack: one `up` per shard count (scale-up only), benchmark, then destroy unless --keep",
    )
    .requiredOption("--stack <name>", "the Pulumi stack (stacks/Pulumi.<name>.yaml), cluster mode")
    .requiredOption(
      "--shards <list>",
      "shard counts, strictly increasing, each valid for the stack (≥ 3 primaries), e.g. 3,6,9",
    )
    .option("--keep", "leave the stack up at the last step (its config keeps that shape) instead of destroying it")
    .option("--output <dir>", "results root (the run writes <dir>/<timestamp>/)", "results")
    .option("--json", "print the rows and paths as JSON on stdout");
}

/** `vbench stack-sweep`. */
export function registerStackSweepCommand(program: Command): void {
  withStackSweepOptions(program.command("stack-sweep")).action(async (flags: Flags) => {
    process.exitCode = await runStackSweepCommand(flags);
  });
}

/** The command on its own argv (tests pass a `select` that hands back a stand-in stack). */
export async function sweepMain(
  argv: string[],
  select: (name: string) => Promise<SweepStack> = selectProjectStack,
): Promise<number> {
  const program = withStackSweepOptions(new Command("vbench stack-sweep"))
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  let flags: Flags;
  try {
    flags = program.parse(argv, { from: "user" }).opts<Flags>();
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  return runStackSweepCommand(flags, select);
}

async function runStackSweepCommand(
  flags: Flags,
  select: (name: string) => Promise<SweepStack> = selectProjectStack,
): Promise<number> {
  const log = (line: string) => {
    if (!flags.json) process.stderr.write(`${line}\n`);
  };
  const unhook = onTerminatingSignal((sig) =>
    process.stderr.write(
      `\nsweep:stack: ${sig}: the stack may be mid-update; run \`pulumi cancel\` / \`pulumi destroy --stack ${flags.stack}\`\n`,
    ),
  );
  try {
    const shards = parseStackShards(flags.shards);
    const stack = await select(flags.stack);
    const { runStackSweep } = await import("./stack-sweep.js");
    const result = await runStackSweep({
      stack,
      shards,
      keep: flags.keep === true,
      outputDir: flags.output,
      onProgress: log,
    });
    if (flags.json) {
      const out = {
        ok: true,
        runDir: result.runDir,
        report: result.reportPath,
        destroyed: result.destroyed,
        stepReports: result.stepReports,
        rows: result.rows,
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      const end = result.destroyed
        ? "stack destroyed, config put back"
        : `stack kept at ${shards.at(-1)} primaries (its config says so)`;
      process.stdout.write(
        `\n${renderSweepTable(result.rows)}\n\n${end}\nresults: ${result.runDir}/{sweep.csv, report.html, run.json, raw/}\n`,
      );
    }
    return 0;
  } catch (err) {
    process.stderr.write(`sweep:stack: ${(err as Error).message}\n`);
    return err instanceof SweepRefused ? 2 : 1;
  } finally {
    unhook();
  }
}
