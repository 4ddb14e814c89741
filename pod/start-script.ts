/**
 * The container entrypoint (a POSIX sh script in the ConfigMap): writes the two includes
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
import { shQuote } from "./sh-cli.js";
import { DATA_DIR, RUN_DIR, SECRET_MOUNT } from "./paths.js";
import { renderReplicationStartBlock, type ReplicationStartOptions } from "./replication-start.js";

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
}

/** The include the Sentinel-aware start decision writes (`replicaof host port`, or empty). */
export function replicationIncludeFile(runDir: string = RUN_DIR): string {
  return includeFiles(runDir).replication;
}

/** Where a cluster member keeps its `availability-zone` across restarts (on the data volume). */
export function zoneFileOf(dataDir: string = DATA_DIR): string {
  return `${dataDir}/availability-zone`;
}

function announceBlock(mode: ValkeyMode, dataDir: string): string[] {
  if (mode === "replication") {
    return [
      `if [ -n "\${VALKEY_ANNOUNCE_HOST:-}" ]; then`,
      `  printf 'replica-announce-ip %s\\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$announce_tmp"`,
      `fi`,
    ];
  }
  return [
    `[ -n "\${VALKEY_ANNOUNCE_HOST:-}" ] || fail "VALKEY_ANNOUNCE_HOST (the pod's stable DNS name) is not set"`,
    `printf 'cluster-announce-hostname %s\\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$announce_tmp"`,
    `if [ -n "\${POD_NAME:-}" ]; then`,
    `  printf 'cluster-announce-human-nodename %s\\n' "$(conf_quote "$POD_NAME")" >> "$announce_tmp"`,
    `fi`,
    `if [ -n "\${VALKEY_ANNOUNCE_IP:-}" ]; then`,
    `  printf 'cluster-announce-ip %s\\n' "$(conf_quote "$VALKEY_ANNOUNCE_IP")" >> "$announce_tmp"`,
    `fi`,
    ...availabilityZoneBlock(zoneFileOf(dataDir)),
  ];
}

/**
 * `availability-zone` (Valkey >= 8.1; gossiped to every node and shown in CLUSTER SHARDS from 9.1) from $VALKEY_AVAILABILITY_ZONE, or
 * else from the zone file a previous run kept (see the header).
 */
function availabilityZoneBlock(zoneFile: string): string[] {
  return [
    `zone="\${VALKEY_AVAILABILITY_ZONE:-}"`,
    `zone_file=${shQuote(zoneFile)}`,
    `if [ -z "$zone" ] && [ -r "$zone_file" ]; then zone=$(head -n 1 "$zone_file"); fi`,
    `if [ -n "$zone" ]; then`,
    `  v=$(valkey-server --version 2>/dev/null | sed -n 's/.* v=\\([0-9]*\\)\\.\\([0-9]*\\)\\..*/\\1 \\2/p')`,
    `  major=\${v%% *}`,
    `  minor=\${v#* }`,
    `  if [ -n "$v" ] && { [ "$major" -gt 8 ] || { [ "$major" -eq 8 ] && [ "$minor" -ge 1 ]; }; }; then`,
    `    printf 'availability-zone %s\\n' "$(conf_quote "$zone")" >> "$announce_tmp"`,
    `  else`,
    `    echo "start.sh: this valkey-server (version \${major:-?}.\${minor:-?}) predates availability-zone (8.1); not setting it" >&2`,
    `  fi`,
    `fi`,
  ];
}

function authBlock(auth: boolean, passwordFile: string): string[] {
  if (!auth) return [`: > "$auth_tmp"`];
  return [
    `password_file=${shQuote(passwordFile)}`,
    `[ -r "$password_file" ] || fail "$password_file is not readable"`,
    `password=$(cat "$password_file")`,
    `[ -n "$password" ] || fail "the password in $password_file is empty"`,
    `case "$password" in *"$nl"*) fail "the password must be a single line" ;; esac`,
    `quoted=$(conf_quote "$password")`,
    `printf 'requirepass %s\\nmasterauth %s\\n' "$quoted" "$quoted" > "$auth_tmp"`,
    `unset password quoted`,
  ];
}

/**
 * One background subshell runs the scripts in order, the last one exec'd; after the exec, $$ is
 * valkey-server's pid (PID 1 in the container), and each script stops when that process is gone.
 * One long-lived child, not one per script: valkey-server reaps children only around its own
 * forks, so a script that exited early would linger as a zombie.
 */
function backgroundBlock(o: StartScriptOptions): string[] {
  const scripts = o.backgroundScripts ?? [];
  if (scripts.length === 0) return [];
  if (o.mode !== "cluster") throw new Error("start script: backgroundScripts are for cluster mode only");
  const steps = scripts.map((s, i) => `${i === scripts.length - 1 ? "exec " : ""}sh ${shQuote(s)} "$$"`);
  return [`( ${steps.join("; ")} ) </dev/null &`];
}

function rejoinGateBlock(o: StartScriptOptions): string[] {
  if (o.rejoinGate === undefined) return [];
  if (o.mode !== "cluster") throw new Error("start script: rejoinGate is for cluster mode only");
  return [
    `if [ ! -e ${shQuote(`${o.dataDir ?? DATA_DIR}/nodes.conf`)} ]; then sh ${shQuote(o.rejoinGate)} gate </dev/null || true; fi`,
  ];
}

export function renderStartScript(o: StartScriptOptions): string {
  const runDir = o.runDir ?? RUN_DIR;
  const files = includeFiles(runDir);
  const lines = [
    `#!/bin/sh`,
    `# Valkey entrypoint (${o.mode} mode), rendered by valkey-on-eks. Usage: start.sh <valkey.conf>`,
    `# Writes ${files.auth} and ${files.announce}, which valkey.conf includes, then execs valkey-server.`,
    `set -eu`,
    `fail() { echo "start.sh: $*" >&2; exit 1; }`,
    `[ $# -eq 1 ] || fail "usage: start.sh <valkey.conf>"`,
    `conf="$1"`,
    `nl='`,
    `'`,
    `# A value for valkey.conf: double-quoted, with backslash and double quote escaped.`,
    `conf_quote() { printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g')"; }`,
    `umask 077`,
    `mkdir -p ${shQuote(runDir)} ${shQuote(o.dataDir ?? DATA_DIR)}`,
    `auth_tmp=${shQuote(`${files.auth}.tmp`)}`,
    `announce_tmp=${shQuote(`${files.announce}.tmp`)}`,
    ...authBlock(o.auth, o.passwordFile ?? `${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}`),
    `: > "$announce_tmp"`,
    ...announceBlock(o.mode, o.dataDir ?? DATA_DIR),
    `mv -f "$auth_tmp" ${shQuote(files.auth)}`,
    `mv -f "$announce_tmp" ${shQuote(files.announce)}`,
    ...(o.sentinel === undefined || o.mode !== "replication"
      ? []
      : renderReplicationStartBlock({
          ...o.sentinel,
          dataDir: o.dataDir ?? DATA_DIR,
          includeFile: replicationIncludeFile(runDir),
        })),
    ...rejoinGateBlock(o),
    ...backgroundBlock(o),
    `exec valkey-server "$conf"`,
  ];
  return lines.join("\n") + "\n";
}
