/**
 * What every long-running vbench command does around its work: the terminating-signal hook (it
 * stops every process the command started, util/process-reaper.ts) and the mapping of errors to
 * exit codes (errors.ts).
 */
import { onTerminatingSignal } from "../../core/util/process-reaper.js";
import { CliError, RunFailed, UsageError } from "./errors.js";

/**
 * Runs `work` with the signal hook installed (`vbench <command>: <signal>: stopped <what>` on
 * stderr). A CliError (UsageError, CheckFailed, ...) passes through; `known` may turn a known error into another
 * exit-code
 * error (return undefined for the rest); anything else becomes RunFailed.
 */
export async function guarded<T>(
  command: string,
  what: string,
  work: () => Promise<T>,
  known?: (err: unknown) => Error | undefined,
): Promise<T> {
  const unhook = onTerminatingSignal((sig) => process.stderr.write(`\nvbench ${command}: ${sig}: stopped ${what}\n`));
  try {
    return await work();
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw known?.(err) ?? new RunFailed((err as Error).message, { cause: err });
  } finally {
    unhook();
  }
}

/**
 * The password in the environment variable `--password-env` names; undefined without the flag, a UsageError when it is
 * unset or empty.
 */
export function passwordFromEnv(envName: string | undefined): string | undefined {
  if (envName === undefined) return undefined;
  const password = process.env[envName];
  if (password === undefined || password === "")
    throw new UsageError(`--password-env ${envName}: that environment variable is not set`);
  return password;
}
