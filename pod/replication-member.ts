/**
 * A replication-mode member under Sentinel: everything its pod runs, assembled once. valkey.conf
 * (no fixed role: start.sh asks the Sentinels and writes `replicaof` or nothing into its include;
 * a local process's own lines after it when `local` is given), start.sh, readiness.sh and the
 * switchover preStop. The ConfigMap holds these files (components/valkey/replication-manifests.ts)
 * and a local member writes the same ones into its directory (benchmarks/local/sentinel-topology.ts;
 * the local switchover runs its prestop.sh, benchmarks/local/replication-prestop.ts).
 */
import type { ValkeyConfig } from "../config/types.js";
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { CLI_AUTH_ENV, type PodDefinition, type PodPaths } from "./definition.js";
import { renderDeployedLocalConf, type LocalConfOverrides } from "./local-conf.js";
import { CONFIG_MOUNT, DATA_DIR, PRESTOP_SCRIPT_KEY, READINESS_SCRIPT_KEY, RUN_DIR, START_SCRIPT_KEY } from "./paths.js";
import { renderReadinessScript } from "./readiness-script.js";
import { DEFAULT_SWITCHOVER_TIMEOUT_SECONDS, renderReplicationPreStopScript, type ReplicationPreStopOptions } from "./replication-prestop-script.js";
import type { ReplicationStartOptions } from "./replication-start.js";
import { renderStartScript } from "./start-script.js";
import { renderValkeyConf } from "./valkey-conf.js";

/** The member's valkey.conf file name. */
export const MEMBER_CONF_KEY = "valkey.conf";

export interface ReplicationMemberOptions extends PodPaths {
  /** The stack's `valkey` section (valkey.conf). */
  valkey: ValkeyConfig;
  /** Whether start.sh writes requirepass/masterauth from `passwordFile`. */
  auth: boolean;
  masterName: string;
  /** The Sentinels, `host:port` each (pod DNS names in the cluster). */
  sentinels: readonly string[];
  /** @default VALKEY_PORT */
  port?: number;
  /** Address the member's own scripts reach its server at. @default each script's (127.0.0.1) */
  localHost?: string;
  /** Listen addresses (valkey.conf `bind`). @default every address (valkey-conf.ts) */
  bind?: string;
  /** A local process: the lines that override the deployed conf (pod/local-conf.ts). @default none (the pod) */
  local?: LocalConfOverrides;
  /** The start decision's clocks, shortened by the local topologies. @default the deployed defaults */
  start?: Omit<ReplicationStartOptions, "masterName" | "sentinels" | "port" | "dataDir" | "includeFile">;
  /** The preStop's clocks. @default the deployed defaults */
  preStop?: Omit<ReplicationPreStopOptions, "masterName" | "sentinels" | "port" | "localHost">;
}

/** Environment a replication member's scripts read; the pod spec sets each (statefulset.ts). */
export function replicationMemberEnv(auth: boolean): string[] {
  return ["POD_NAME", "VALKEY_ANNOUNCE_HOST", ...(auth ? CLI_AUTH_ENV : [])];
}

export function replicationMemberPod(o: ReplicationMemberOptions): PodDefinition {
  const dir = o.configDir ?? CONFIG_MOUNT;
  const dataDir = o.dataDir ?? DATA_DIR;
  const runDir = o.runDir ?? RUN_DIR;
  const at = (key: string) => `${dir}/${key}`;
  const port = o.port ?? VALKEY_PORT;
  const self = { port, ...(o.localHost === undefined ? {} : { localHost: o.localHost }) };
  const confOptions = { role: { kind: "replication-member" } as const, port, dataDir, runDir, ...(o.bind === undefined ? {} : { bind: o.bind }) };
  const files = {
    [MEMBER_CONF_KEY]: o.local === undefined ? renderValkeyConf(o.valkey, confOptions) : renderDeployedLocalConf(o.valkey, confOptions, o.local),
    [START_SCRIPT_KEY]: renderStartScript({
      mode: "replication",
      auth: o.auth,
      ...(o.passwordFile === undefined ? {} : { passwordFile: o.passwordFile }),
      runDir,
      dataDir,
      sentinel: { ...o.start, masterName: o.masterName, sentinels: o.sentinels, port },
    }),
    [READINESS_SCRIPT_KEY]: renderReadinessScript({ mode: "replication", ...self }),
    [PRESTOP_SCRIPT_KEY]: renderReplicationPreStopScript({
      timeoutSeconds: DEFAULT_SWITCHOVER_TIMEOUT_SECONDS,
      ...o.preStop,
      masterName: o.masterName,
      sentinels: o.sentinels,
      ...self,
    }),
  };
  return {
    files,
    command: ["sh", at(START_SCRIPT_KEY), at(MEMBER_CONF_KEY)],
    preStop: ["sh", at(PRESTOP_SCRIPT_KEY)],
    readiness: ["sh", at(READINESS_SCRIPT_KEY)],
    env: replicationMemberEnv(o.auth),
  };
}
