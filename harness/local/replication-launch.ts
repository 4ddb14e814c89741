/**
 * How the replication members and Sentinels of a local SentinelTopology start: each one's pod
 * definition (pod/replication-member.ts, pod/sentinel.ts: the files and command the manifests
 * mount and run) written into its own directory and run, with only the local differences as
 * options (directories, address, port, the conf lines of pod/local-conf.ts, shorter clocks) and
 * the pod's environment set as its pod spec sets it; the password in a 0600 file.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ValkeyConfig } from "../../config/types.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { replicationMemberPod, type ReplicationMemberOptions } from "../../pod/replication-member.js";
import type { SentinelTimings } from "../../pod/sentinel-conf.js";
import { sentinelPod } from "../../pod/sentinel.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { launchPod, localPodEnv, writePasswordFile } from "./pod-files.js";
import type { LaunchCommand, LaunchContext, StartOptions } from "./valkey-process.js";

/** The local members' preStop bound (the deployed one is DEFAULT_SWITCHOVER_TIMEOUT_SECONDS). */
export const REPLICATION_PRESTOP_TIMEOUT_SECONDS = 20;

export interface MemberLaunchOptions {
  /** The member's name, `<anything>-<ordinal>` (its POD_NAME: start.sh reads the ordinal from it). */
  name: string;
  host: string;
  port: number;
  password?: string;
  sentinels: readonly string[];
  masterName: string;
  /** Local overrides of the deployed persistence / io-threads settings (pod/local-conf.ts). */
  server?: Pick<StartOptions, "appendonly" | "save" | "ioThreads">;
  /** The deployed `valkey` config whose valkey.conf the member runs. @default the embedded default stack's */
  valkey?: ValkeyConfig;
  /** Empty the data dir first (a lost volume). */
  wipeData?: boolean;
  /** The valkey-server it runs (its image's). @default resolveBinaries()'s */
  serverPath?: string;
  /** Timings of the start decision. */
  sentinel?: ReplicationMemberOptions["start"];
  /** Rendered as for a stack with `restore.from` (the first start accepts restored data). @default false */
  restore?: boolean;
  onDataDir?: (dir: string) => void;
}

/**
 * How a member starts locally: the pod's own files and command (pod/replication-member.ts, the
 * definition the manifests mount) written into its dir, with only the local differences as
 * options (directories, address, port, the conf lines of pod/local-conf.ts, shorter clocks), the
 * pod's environment set as its pod spec sets it, the password in a 0600 file.
 * Layout of the member dir: data/ (the data dir), run/ (the includes), secret/password.
 */
export function memberLaunch(o: MemberLaunchOptions): (ctx: LaunchContext) => LaunchCommand {
  return ({ dir, logfile }) => {
    const dataDir = join(dir, "data");
    const runDir = join(dir, "run");
    o.onDataDir?.(dataDir);
    if (o.wipeData) rmSync(dataDir, { recursive: true, force: true });
    const passwordFile = writePasswordFile(dir, o.password);
    const pod = replicationMemberPod({
      valkey: o.valkey ?? defaultValkeyConfig(),
      auth: o.password !== undefined,
      masterName: o.masterName,
      sentinels: o.sentinels,
      configDir: dir,
      runDir,
      dataDir,
      passwordFile,
      port: o.port,
      localHost: o.host,
      // Outgoing connections (the replication link) from its own address, as a pod's from its pod IP.
      bind: o.host,
      local: { ...o.server, logfile, bindSourceAddr: o.host },
      ...(o.sentinel === undefined ? {} : { start: o.sentinel }),
      restore: o.restore,
      preStop: { timeoutSeconds: REPLICATION_PRESTOP_TIMEOUT_SECONDS },
    });
    return launchPod(o.name, pod, dir, {
      ...localPodEnv(o.password, o.serverPath),
      POD_NAME: o.name,
      VALKEY_ANNOUNCE_HOST: o.host,
    });
  };
}

export interface SentinelLaunchOptions {
  name: string;
  host: string;
  port: number;
  password?: string;
  masterName: string;
  /** The primary it monitors on a first start. */
  primary: NodeEndpoint;
  quorum: number;
  timings: SentinelTimings;
  /** The valkey-server it runs (`--sentinel`; its image's). @default resolveBinaries()'s */
  serverPath?: string;
}

/**
 * How a Sentinel starts locally: its files in config/ (the pod's ConfigMap), its state file in
 * its dir (the pod's volume), written on a first start only by the pod's sentinel-start.sh.
 */
export function sentinelLaunch(o: SentinelLaunchOptions): (ctx: LaunchContext) => LaunchCommand {
  return ({ dir, logfile }) => {
    const configDir = join(dir, "config");
    mkdirSync(configDir, { recursive: true });
    const passwordFile = writePasswordFile(dir, o.password);
    const pod = sentinelPod({
      ...o.timings,
      auth: o.password !== undefined,
      masterName: o.masterName,
      primary: o.primary,
      quorum: o.quorum,
      port: o.port,
      configDir,
      dataDir: dir,
      passwordFile,
      local: { bind: o.host, logfile, bindSourceAddr: o.host },
    });
    return launchPod(o.name, pod, configDir, {
      ...localPodEnv(o.password, o.serverPath),
      VALKEY_ANNOUNCE_HOST: o.host,
    });
  };
}
