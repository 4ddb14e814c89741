/**
 * The container entrypoint (pod/scripts/start.sh, in the ConfigMap): writes the two includes
 * valkey.conf names, then execs valkey-server.
 *
 * - auth.conf: `requirepass`/`masterauth` with the password read from the mounted Secret file,
 *   quoted for valkey.conf, mode 0600, on a memory-backed volume. The password is never on a
 *   command line: it goes from a file to a shell variable to the builtin printf and to sed's
 *   stdin.
 * - announce.conf: the pod's stable DNS name ($VALKEY_ANNOUNCE_HOST): `replica-announce-ip`
 *   in replication mode; `cluster-announce-hostname` (+ `cluster-announce-human-nodename`
 *   $POD_NAME, optional `cluster-announce-ip` $VALKEY_ANNOUNCE_IP, and `availability-zone`) in
 *   cluster mode. The zone is $VALKEY_AVAILABILITY_ZONE (the pod's zone label, which Kubernetes
 *   sets from 1.35) or, when that is empty, the zone kept in `<dataDir>/availability-zone`: the
 *   ClusterBootstrap sets each member's zone with CONFIG SET (it knows pod -> node -> zone) and
 *   the member's failback loop writes it there; a zonal EBS volume keeps the pod in its zone,
 *   so the file stays true across restarts.
 */
import type { ValkeyMode } from "../config/types.js";
import { PASSWORD_SECRET_KEY } from "./paths.js";
import { includeFiles } from "./valkey-conf.js";
import { renderShellFile } from "./shell-file.js";
import { DATA_DIR, RUN_DIR, SECRET_MOUNT } from "./paths.js";
import { NO_REPLICATION_START, replicationStartValues, type ReplicationStartOptions } from "./replication-start.js";

export interface StartScriptOptions {
  mode: ValkeyMode;
  /** Whether auth.conf gets the password from `passwordFile`; false writes an empty auth.conf. */
  auth: boolean;
  /** @default `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}` */
  passwordFile?: string;
  /** @default RUN_DIR */
  runDir?: string;
  /** Created if missing. @default DATA_DIR */
  dataDir?: string;
  /**
   * Replication mode with Sentinel: the member asks the Sentinels who the primary is and writes
   * `replicaof` (or nothing) to `${runDir}/replication.conf`, which valkey.conf must include.
   */
  sentinel?: Omit<ReplicationStartOptions, "dataDir" | "includeFile">;
  /**
   * Cluster mode: scripts run one after the other in the background, with the server's pid, from
   * just before the exec (cluster-heal-script.ts: re-meets peers whose addresses changed, then
   * exits; az-failback-script.ts: runs as long as the server).
   */
  backgroundScripts?: string[];
  /**
   * Cluster mode: run in the foreground as `sh <script> gate` before the server starts, only
   * when `<dataDir>/nodes.conf` is missing (a first start or a lost volume; cluster-rejoin-script.ts).
   */
  rejoinGate?: string;
  /**
   * Cluster mode, a restart (`<dataDir>/nodes.conf` present): the server starts with `cluster-replica-no-failover
   * yes`, and the heal step (cluster-heal-script.ts), which must run, releases it. A replica restarted with its
   * primary may otherwise be elected over that primary once it has synced from it, while the others still flag the
   * primary `fail` (Valkey keeps a primary with slots flagged for 2 × cluster-node-timeout after it is reachable
   * again): the writes the primary acknowledged in between are lost (docs/drills.md). @default false
   */
  holdFailover?: boolean;
}

/** The include the Sentinel-aware start decision writes (`replicaof host port`, or empty). */
export function replicationIncludeFile(runDir: string = RUN_DIR): string {
  return includeFiles(runDir).replication;
}

/** Where a cluster member keeps its `availability-zone` across restarts (on the data volume). */
export function zoneFileOf(dataDir: string = DATA_DIR): string {
  return `${dataDir}/availability-zone`;
}

/** The background scripts as start.sh runs them: paths sh would not split or glob, space-separated. */
function backgroundValue(o: StartScriptOptions): string {
  const scripts = o.backgroundScripts ?? [];
  if (scripts.length > 0 && o.mode !== "cluster")
    throw new Error("start script: backgroundScripts are for cluster mode only");
  for (const s of scripts)
    if (!/^[A-Za-z0-9._/-]+$/.test(s))
      throw new Error(`start script: background script path '${s}' must be a plain path`);
  return scripts.join(" ");
}

function holdFailoverValue(o: StartScriptOptions): string {
  if (o.holdFailover !== true) return "";
  if (o.mode !== "cluster") throw new Error("start script: holdFailover is for cluster mode only");
  return "1";
}

function rejoinGateValue(o: StartScriptOptions): string {
  if (o.rejoinGate === undefined) return "";
  if (o.mode !== "cluster") throw new Error("start script: rejoinGate is for cluster mode only");
  if (o.rejoinGate === "") throw new Error("start script: rejoinGate is empty");
  return o.rejoinGate;
}

export function renderStartScript(o: StartScriptOptions): string {
  const runDir = o.runDir ?? RUN_DIR;
  const dataDir = o.dataDir ?? DATA_DIR;
  const files = includeFiles(runDir);
  const replication =
    o.sentinel === undefined || o.mode !== "replication"
      ? NO_REPLICATION_START
      : replicationStartValues({ ...o.sentinel, dataDir, includeFile: replicationIncludeFile(runDir) });
  return renderShellFile("start.sh", {
    mode: o.mode,
    run_dir: runDir,
    data_dir: dataDir,
    auth_file: files.auth,
    announce_file: files.announce,
    password_file: o.auth ? (o.passwordFile ?? `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}`) : "",
    zone_file: zoneFileOf(dataDir),
    rejoin_gate: rejoinGateValue(o),
    background: backgroundValue(o),
    hold_failover: holdFailoverValue(o),
    ...replication,
  });
}
