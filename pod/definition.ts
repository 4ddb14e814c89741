/**
 * What one pod runs, as one value: the files it mounts (valkey.conf, sentinel.conf, scripts), the
 * command of its container, the commands of its preStop hook and readiness probe, and the names
 * of the environment variables its scripts read. The Kubernetes manifests mount exactly these
 * files and run exactly these commands (components/valkey/); a local process writes the same
 * files into its own directory and runs the same command (harness/local/, harness/drill/).
 * Only the options differ (paths, ports, the drills' shorter clocks), never the assembly.
 */
export interface PodDefinition {
  /** File name → content; every file lives in `configDir` (the ConfigMap mount, or a local dir). */
  files: Record<string, string>;
  /** The container's command (argv), naming files under `configDir`. */
  command: string[];
  /** The preStop hook's command, when the pod has one. */
  preStop?: string[];
  /** The readiness probe's command; undefined = ready when the server answers PONG. */
  readiness?: string[];
  /** Environment variables its scripts read; the pod spec (or the local launcher) must set each. */
  env: readonly string[];
}

/** Where a pod's files live and what its scripts reach. The deployed defaults are pod/paths.ts's. */
export interface PodPaths {
  /** Directory of the files. @default CONFIG_MOUNT */
  configDir?: string;
  /** Memory-backed directory of the generated includes. @default RUN_DIR */
  runDir?: string;
  /** The data volume. @default DATA_DIR */
  dataDir?: string;
  /** The password file, when auth is on. @default `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}` */
  passwordFile?: string;
}

/** The password variables valkey-cli reads (VALKEYCLI_AUTH; redis-cli: REDISCLI_AUTH), set when auth is on. */
export const CLI_AUTH_ENV = ["VALKEYCLI_AUTH", "REDISCLI_AUTH"] as const;

/**
 * Every variable `def` needs that `env` lacks (an empty value counts as set); the launcher refuses to start with any.
 */
export function missingEnv(def: PodDefinition, env: Record<string, string | undefined>): string[] {
  return def.env.filter((name) => env[name] === undefined);
}
