/**
 * The in-cluster load's settings from its environment (the Job contract's env vars, see
 * components/steps/failure-drill/load-job.ts). Pure; a missing or bad variable is an error naming it.
 */
export interface LoadSettings {
  mode: "cluster" | "replication";
  target: { host: string; port: number };
  sentinel?: { host: string; port: number; masterName: string };
  rate: number;
  loadS: number;
  keyPrefix: string;
  waitTimeoutMs: number;
  commandTimeoutMs: number;
  password: string | undefined;
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string {
  const v = env[name];
  if (v === undefined || v === "") throw new Error(`${name} is not set`);
  return v;
}

function int(env: Env, name: string, min: number, fallback?: number): number {
  const v = env[name];
  if ((v === undefined || v === "") && fallback !== undefined) return fallback;
  const s = text(env, name);
  if (!/^\d+$/.test(s) || Number(s) < min)
    throw new Error(`${name} must be a whole number ≥ ${min} (got ${JSON.stringify(s)})`);
  return Number(s);
}

export function loadSettingsFromEnv(env: Env): LoadSettings {
  const mode = text(env, "DRILL_MODE");
  if (mode !== "cluster" && mode !== "replication")
    throw new Error(`DRILL_MODE must be cluster or replication (got ${JSON.stringify(mode)})`);
  const password = env["VALKEY_PASSWORD"];
  const settings: LoadSettings = {
    mode,
    target: { host: text(env, "DRILL_TARGET_HOST"), port: int(env, "DRILL_TARGET_PORT", 1) },
    rate: int(env, "DRILL_RATE", 1),
    loadS: int(env, "DRILL_LOAD_S", 1),
    keyPrefix: text(env, "DRILL_KEY_PREFIX"),
    waitTimeoutMs: int(env, "DRILL_WAIT_TIMEOUT_MS", 0, 500),
    commandTimeoutMs: int(env, "DRILL_COMMAND_TIMEOUT_MS", 1, 1000),
    password: password === undefined || password === "" ? undefined : password,
  };
  if (mode === "replication") {
    settings.sentinel = {
      host: text(env, "DRILL_SENTINEL_HOST"),
      port: int(env, "DRILL_SENTINEL_PORT", 1),
      masterName: text(env, "DRILL_MASTER_NAME"),
    };
  }
  return settings;
}
