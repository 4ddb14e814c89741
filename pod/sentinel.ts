/**
 * A Sentinel: everything its pod runs, assembled once. sentinel.conf is the template (no secret,
 * no per-pod value) and sentinel-start.sh makes the state file from it on a first start (the
 * announced name from $VALKEY_ANNOUNCE_HOST, the password lines from the password file) and
 * execs `valkey-server <state> --sentinel`. The ConfigMap holds these files
 * (components/valkey/replication-manifests.ts) and a local Sentinel writes the same ones into its
 * directory and runs the same command (harness/local/sentinel-topology.ts).
 */
import type { NodeEndpoint } from "../vocabulary/endpoint.js";
import { SENTINEL_PORT } from "../vocabulary/ports.js";
import { CLI_AUTH_ENV, type PodDefinition } from "./definition.js";
import { CONFIG_MOUNT, PASSWORD_SECRET_KEY, SECRET_MOUNT } from "./paths.js";
import { renderSentinelConf, type SentinelTimings } from "./sentinel-conf.js";
import { renderSentinelStartScript } from "./sentinel-start-script.js";

export const SENTINEL_CONF_KEY = "sentinel.conf";
export const SENTINEL_START_KEY = "sentinel-start.sh";
/** The Sentinel's volume: its state file (sentinel.conf, rewritten by Sentinel). */
export const SENTINEL_DATA_DIR = "/data";

export interface SentinelPodOptions extends SentinelTimings {
  /** Whether the state file gets requirepass / sentinel-pass / auth-pass from `passwordFile`. */
  auth: boolean;
  masterName: string;
  /** The primary monitored on a first start (a pod DNS name in the cluster). */
  primary: NodeEndpoint;
  quorum: number;
  /** `resolve-hostnames` and `announce-hostnames` (pod DNS names). @default false */
  hostnames?: boolean;
  /** @default SENTINEL_PORT */
  port?: number;
  /** Directory of the files. @default CONFIG_MOUNT */
  configDir?: string;
  /** Sentinel's own volume, where its state file lives. @default SENTINEL_DATA_DIR */
  dataDir?: string;
  /** @default `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}` */
  passwordFile?: string;
  /**
   * A local process: its listen address, log file and the source of its outgoing connections. @default none (the pod)
   */
  local?: { bind: string; logfile: string; bindSourceAddr: string };
  /** Seconds to wait for the monitored primary's name to resolve. @default the script's (60) */
  resolveWaitSeconds?: number;
}

/** The state file Sentinel keeps (and rewrites) on its volume. */
export function sentinelStateFile(dataDir: string = SENTINEL_DATA_DIR): string {
  return `${dataDir}/sentinel.conf`;
}

export function sentinelPod(o: SentinelPodOptions): PodDefinition {
  const dir = o.configDir ?? CONFIG_MOUNT;
  const dataDir = o.dataDir ?? SENTINEL_DATA_DIR;
  const template = renderSentinelConf({
    port: o.port ?? SENTINEL_PORT,
    dir: dataDir,
    masterName: o.masterName,
    primary: o.primary,
    quorum: o.quorum,
    downAfterMs: o.downAfterMs,
    failoverTimeoutMs: o.failoverTimeoutMs,
    parallelSyncs: o.parallelSyncs,
    hostnames: o.hostnames ?? false,
    ...(o.local === undefined ? {} : { bind: o.local.bind, logfile: o.local.logfile }),
  });
  // Sentinel connects to members and Sentinels from its own address (sentinel.c
  // instanceLinkConnect binds server.bind_source_addr), as a pod does from its pod IP.
  const local = o.local === undefined ? "" : `bind-source-addr ${o.local.bindSourceAddr}\n`;
  return {
    files: {
      [SENTINEL_CONF_KEY]: template + local,
      [SENTINEL_START_KEY]: renderSentinelStartScript({
        templateFile: `${dir}/${SENTINEL_CONF_KEY}`,
        stateFile: sentinelStateFile(dataDir),
        masterName: o.masterName,
        passwordFile: o.auth ? (o.passwordFile ?? `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}`) : undefined,
        port: o.port ?? SENTINEL_PORT,
        ...(o.local === undefined ? {} : { localHost: o.local.bind }),
        ...(o.resolveWaitSeconds === undefined ? {} : { resolveWaitSeconds: o.resolveWaitSeconds }),
      }),
    },
    command: ["sh", `${dir}/${SENTINEL_START_KEY}`],
    env: ["VALKEY_ANNOUNCE_HOST", ...(o.auth ? CLI_AUTH_ENV : [])],
  };
}
