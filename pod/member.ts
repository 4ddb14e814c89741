/**
 * What both kinds of data member share (pod/cluster-member.ts, pod/replication-member.ts): the
 * options every member takes, where its files and directories are, the address its own scripts
 * reach its server at, and its valkey.conf (the stack's, with a local process's own lines after it).
 */
import type { ValkeyConfig } from "../config/types.js";
import { VALKEY_PORT } from "../vocabulary/ports.js";
import type { PodDefinition, PodPaths } from "./definition.js";
import { renderDeployedLocalConf, type LocalConfOverrides } from "./local-conf.js";
import {
  CONFIG_MOUNT,
  DATA_DIR,
  PRESTOP_LOG_FILE,
  PRESTOP_SCRIPT_KEY,
  READINESS_SCRIPT_KEY,
  RUN_DIR,
  START_SCRIPT_KEY,
} from "./paths.js";
import { renderValkeyConf, type ConfRole } from "./valkey-conf.js";

/** A member's valkey.conf file name. */
export const VALKEY_CONF_KEY = "valkey.conf";

export interface MemberOptions extends PodPaths {
  /** The stack's `valkey` section (valkey.conf). */
  valkey: ValkeyConfig;
  /** Whether start.sh writes requirepass/masterauth from `passwordFile`. */
  auth: boolean;
  /** @default VALKEY_PORT */
  port?: number;
  /** Address the member's own scripts reach its server at. @default each script's (127.0.0.1) */
  localHost?: string;
  /** Listen addresses (valkey.conf `bind`). @default every address (valkey-conf.ts) */
  bind?: string;
  /** A local process: the lines that override the deployed conf (pod/local-conf.ts). @default none (the pod) */
  local?: LocalConfOverrides;
  /**
   * `restore.from` is set: the scripts' first-start paths accept restored data (readiness, the replication start
   * decision). @default false
   */
  restore?: boolean;
}

export interface MemberLayout {
  /** `${configDir}/<file>`. */
  at: (file: string) => string;
  dataDir: string;
  runDir: string;
  /** The port and address the member's scripts reach their own server at. */
  self: { port: number; localHost?: string };
  /** valkey.conf's text. */
  conf: string;
  /** start.sh's options every member passes. */
  start: { auth: boolean; passwordFile?: string; runDir: string; dataDir: string };
}

export function memberLayout(o: MemberOptions, role: ConfRole, busPort?: number): MemberLayout {
  const dir = o.configDir ?? CONFIG_MOUNT;
  const dataDir = o.dataDir ?? DATA_DIR;
  const runDir = o.runDir ?? RUN_DIR;
  const port = o.port ?? VALKEY_PORT;
  const confOptions = {
    role,
    port,
    dataDir,
    runDir,
    ...(busPort === undefined ? {} : { busPort }),
    ...(o.bind === undefined ? {} : { bind: o.bind }),
  };
  return {
    at: (file) => `${dir}/${file}`,
    dataDir,
    runDir,
    self: { port, ...(o.localHost === undefined ? {} : { localHost: o.localHost }) },
    conf:
      o.local === undefined
        ? renderValkeyConf(o.valkey, confOptions)
        : renderDeployedLocalConf(o.valkey, confOptions, o.local),
    start: { auth: o.auth, ...(o.passwordFile === undefined ? {} : { passwordFile: o.passwordFile }), runDir, dataDir },
  };
}

/**
 * Where the preStop also writes its log (lib-hook-log.sh): the container's own stderr, the
 * server's, as the container's PID 1 (the kubelet keeps no output of a hook), and PRESTOP_LOG_FILE
 * on the data volume (the container's log goes with an evicted pod; the volume stays).
 */
export const HOOK_LOG_TO_CONTAINER = "/proc/1/fd/2";

/**
 * A member's definition from its layout and its scripts: valkey.conf beside them, the container
 * running `sh start.sh valkey.conf`, the preStop and readiness scripts as its hooks.
 */
export function memberDefinition(
  l: MemberLayout,
  scripts: Record<string, string>,
  env: readonly string[],
): PodDefinition {
  return {
    files: { [VALKEY_CONF_KEY]: l.conf, ...scripts },
    command: ["sh", l.at(START_SCRIPT_KEY), l.at(VALKEY_CONF_KEY)],
    preStop: ["sh", l.at(PRESTOP_SCRIPT_KEY), HOOK_LOG_TO_CONTAINER, `${l.dataDir}/${PRESTOP_LOG_FILE}`],
    readiness: ["sh", l.at(READINESS_SCRIPT_KEY)],
    env,
  };
}
