/**
 * A cluster-mode member: everything its pod runs, assembled once. valkey.conf (the stack's, with a
 * local process's own lines after it when `local` is given), start.sh (auth and announce includes,
 * the rejoin gate, then heal.sh, rejoin.sh and failback.sh in the background), readiness.sh and
 * prestop.sh. The ConfigMap holds these files (components/valkey/cluster-manifests.ts) and a local
 * member writes the same ones into its directory (benchmarks/drill/cluster-pod.ts).
 */
import type { ValkeyConfig } from "../config/types.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../vocabulary/ports.js";
import { renderAzFailbackScript, type AzFailbackScriptOptions } from "./az-failback-script.js";
import { renderClusterHealScript, type ClusterHealScriptOptions } from "./cluster-heal-script.js";
import { renderClusterRejoinScript, type ClusterRejoinScriptOptions } from "./cluster-rejoin-script.js";
import { CLI_AUTH_ENV, type PodDefinition, type PodPaths } from "./definition.js";
import { renderDeployedLocalConf, type LocalConfOverrides } from "./local-conf.js";
import {
  CONFIG_MOUNT,
  DATA_DIR,
  FAILBACK_SCRIPT_KEY,
  HEAL_SCRIPT_KEY,
  PRESTOP_SCRIPT_KEY,
  READINESS_SCRIPT_KEY,
  REJOIN_SCRIPT_KEY,
  RUN_DIR,
  START_SCRIPT_KEY,
} from "./paths.js";
import { DEFAULT_FAILOVER_TIMEOUT_SECONDS, renderPreStopScript, type PreStopScriptOptions } from "./prestop-script.js";
import { renderReadinessScript } from "./readiness-script.js";
import { renderStartScript, zoneFileOf } from "./start-script.js";
import { renderValkeyConf } from "./valkey-conf.js";

/** The member's valkey.conf file name. */
export const CLUSTER_CONF_KEY = "valkey.conf";

export const BACKGROUND_SCRIPTS = ["heal", "rejoin", "failback"] as const;
export type BackgroundScript = (typeof BACKGROUND_SCRIPTS)[number];
const BACKGROUND_KEYS: Record<BackgroundScript, string> = { heal: HEAL_SCRIPT_KEY, rejoin: REJOIN_SCRIPT_KEY, failback: FAILBACK_SCRIPT_KEY };

type Clock<T> = Omit<T, "port" | "localHost" | "zoneFile">;

export interface ClusterMemberOptions extends PodPaths {
  /** The stack's `valkey` section (valkey.conf). */
  valkey: ValkeyConfig;
  /** Whether start.sh writes requirepass/masterauth from `passwordFile`. */
  auth: boolean;
  /** @default VALKEY_PORT */
  port?: number;
  /** @default VALKEY_BUS_PORT */
  busPort?: number;
  /** Address the member's own scripts reach its server at. @default each script's (127.0.0.1) */
  localHost?: string;
  /** Listen addresses (valkey.conf `bind`). @default every address (valkey-conf.ts) */
  bind?: string;
  /** A local process: the lines that override the deployed conf (pod/local-conf.ts). @default none (the pod) */
  local?: LocalConfOverrides;
  /**
   * The scripts start.sh runs in the background, in this order (rejoin.sh is also its start gate).
   * A pod runs all three; a test leaves one out to show what it does. @default all three
   */
  background?: readonly BackgroundScript[];
  /** The scripts' clocks, shortened by the local drills. @default each script's deployed defaults */
  heal?: Clock<ClusterHealScriptOptions>;
  rejoin?: Clock<ClusterRejoinScriptOptions>;
  failback?: Clock<AzFailbackScriptOptions>;
  preStop?: Clock<PreStopScriptOptions>;
}

/** Environment a cluster member's scripts read; the pod spec sets each (statefulset.ts). */
export function clusterMemberEnv(auth: boolean): string[] {
  return ["POD_NAME", "VALKEY_ANNOUNCE_HOST", "VALKEY_ANNOUNCE_IP", "VALKEY_AVAILABILITY_ZONE", ...(auth ? CLI_AUTH_ENV : [])];
}

export function clusterMemberPod(o: ClusterMemberOptions): PodDefinition {
  const dir = o.configDir ?? CONFIG_MOUNT;
  const dataDir = o.dataDir ?? DATA_DIR;
  const runDir = o.runDir ?? RUN_DIR;
  const at = (key: string) => `${dir}/${key}`;
  const background = o.background ?? BACKGROUND_SCRIPTS;
  const self = { port: o.port ?? VALKEY_PORT, ...(o.localHost === undefined ? {} : { localHost: o.localHost }) };
  const confOptions = {
    role: { kind: "cluster-member" } as const,
    port: self.port,
    busPort: o.busPort ?? VALKEY_BUS_PORT,
    dataDir,
    runDir,
    ...(o.bind === undefined ? {} : { bind: o.bind }),
  };
  const files = {
    [CLUSTER_CONF_KEY]: o.local === undefined ? renderValkeyConf(o.valkey, confOptions) : renderDeployedLocalConf(o.valkey, confOptions, o.local),
    [START_SCRIPT_KEY]: renderStartScript({
      mode: "cluster",
      auth: o.auth,
      ...(o.passwordFile === undefined ? {} : { passwordFile: o.passwordFile }),
      runDir,
      dataDir,
      backgroundScripts: background.map((b) => at(BACKGROUND_KEYS[b])),
      ...(background.includes("rejoin") ? { rejoinGate: at(REJOIN_SCRIPT_KEY) } : {}),
    }),
    [HEAL_SCRIPT_KEY]: renderClusterHealScript({ ...o.heal, ...self }),
    [REJOIN_SCRIPT_KEY]: renderClusterRejoinScript({ ...o.rejoin, ...self }),
    [FAILBACK_SCRIPT_KEY]: renderAzFailbackScript({ ...o.failback, ...self, zoneFile: zoneFileOf(dataDir) }),
    [READINESS_SCRIPT_KEY]: renderReadinessScript({ mode: "cluster", ...self }),
    [PRESTOP_SCRIPT_KEY]: renderPreStopScript({ timeoutSeconds: DEFAULT_FAILOVER_TIMEOUT_SECONDS, ...o.preStop, ...self }),
  };
  return {
    files,
    command: ["sh", at(START_SCRIPT_KEY), at(CLUSTER_CONF_KEY)],
    preStop: ["sh", at(PRESTOP_SCRIPT_KEY)],
    readiness: ["sh", at(READINESS_SCRIPT_KEY)],
    env: clusterMemberEnv(o.auth),
  };
}
