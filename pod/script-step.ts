/**
 * One step of a pod that runs a script to its end (a backup run's container, a restore init
 * container): its command and the environment variables it needs set. The manifests
 * (components/valkey/) and the local runs (harness/backup/local-backup.ts) take the command from
 * here and refuse to build or launch a step whose environment lacks one of them.
 */
export interface ScriptStep {
  /** The container's command (argv), naming the script under the definition's configDir. */
  command: string[];
  /** Variables the step's script cannot run without; the container (or the local launch) must set each. */
  env: readonly string[];
}

/** The variables `step` needs that `names` lacks. */
export function missingStepEnv(step: ScriptStep, names: Iterable<string>): string[] {
  const set = new Set(names);
  return step.env.filter((name) => !set.has(name));
}

/** Throws naming the step and each variable it needs that `names` lacks. */
export function requireStepEnv(what: string, step: ScriptStep, names: Iterable<string>): void {
  const missing = missingStepEnv(step, names);
  if (missing.length > 0) throw new Error(`${what}: ${missing.join(", ")} not set (its script needs them)`);
}
