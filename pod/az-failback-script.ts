/**
 * AZ failback (a POSIX sh loop in the ConfigMap, started in the background by each cluster
 * member's entrypoint, like the heal step). After a failover the promoted replica sits in another
 * zone, so one zone can end up holding more than half of the primaries: losing it then loses the
 * majority. Nothing else moves a primary back. This loop does, with no controller and no API
 * access: every member reads `CLUSTER SHARDS` from its own server (Valkey >= 9.1 gossips each
 * node's `availability-zone`, set from the pod's zone by the start script, and reports it there;
 * 9.0 reports none, so the loop would wait forever: config refuses cluster mode on a 9.0 image
 * tag, valkey-io/valkey#3156) and decides alone.
 *
 * A member acts (`CLUSTER FAILOVER` on itself, the safe manual failover that waits for the offsets
 * to match with clients paused) only when all of these hold, in `confirmRounds` rounds in a row:
 * - `cluster_state:ok`, and every online primary of a shard with slots has a known zone;
 * - it is an online replica whose primary's zone Z holds more than half of the primaries;
 * - moving one primary into its own zone leaves that zone at no more than half;
 * - its replication offset is within `maxLagBytes` of its primary's, and its own INFO says
 *   `master_link_status:up`;
 * - of every member that qualifies, it has the lowest node ID (one failback at a time; all
 *   members compute the same answer from the same gossip).
 * After acting it waits `cooldownSeconds`. The loop ends when the server is gone.
 *
 * With `zoneFile`, each round also keeps the server's `availability-zone` (set by the start
 * script, or by the ClusterBootstrap's CONFIG SET where the pod has no zone label: Kubernetes
 * < 1.35) in that file on the data volume, which the start script reads on the next start.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { boundedCliLines, DEFAULT_CLI_TIMEOUT_SECONDS, localHostLine } from "./sh-cli.js";

export interface AzFailbackScriptOptions {
  /** @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Seconds between rounds. @default 10 */
  intervalSeconds?: number;
  /** Rounds in a row the same imbalance must be seen before acting. @default 3 */
  confirmRounds?: number;
  /** Seconds to wait after a failback before deciding again. @default 60 */
  cooldownSeconds?: number;
  /** A replica further behind its primary than this does not act. @default 1 MiB */
  maxLagBytes?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
  /** Keep the server's `availability-zone` in this file (start-script.ts zoneFileOf). @default not kept */
  zoneFile?: string;
}

/** sh lines: `keep_zone` writes the server's availability-zone to $zone_file when it changed. */
function keepZoneLines(zoneFile: string | undefined): string[] {
  if (zoneFile === undefined) return [`keep_zone() { :; }`];
  if (zoneFile.includes("'")) throw new Error("AZ failback: zoneFile must not contain a single quote");
  return [
    `zone_file='${zoneFile}'`,
    `keep_zone() {`,
    `  z=$(local_cli config get availability-zone 2>/dev/null | sed -n 2p) || return 0`,
    `  [ -n "$z" ] || return 0`,
    `  [ "$(head -n 1 "$zone_file" 2>/dev/null)" != "$z" ] || return 0`,
    `  if printf '%s\\n' "$z" > "$zone_file.tmp" && mv -f "$zone_file.tmp" "$zone_file"; then log "availability-zone $z kept in $zone_file"; fi`,
    `}`,
  ];
}

function wholeNumber(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min)
    throw new Error(`AZ failback: ${name} must be a whole number >= ${min}, got ${v}`);
  return v;
}

/**
 * awk over `valkey-cli cluster shards` (one reply element per line): prints `act` when this node
 * (-v me=ID) should fail back now, else `wait <reason>`.
 */
export const FAILBACK_DECISION_AWK = `
function flush() {
  if (id != "" && role != "") { n++; nid[n] = id; nrole[n] = role; nzone[n] = zone; nhealth[n] = health; noff[n] = off; nshard[n] = shard }
  id = ""; role = ""; zone = ""; health = ""; off = 0
}
BEGIN { shard = 0; n = 0; expect = ""; inslots = 0 }
{ sub(/\\r$/, "") }
expect != "" {
  if (expect == "id") { flush(); id = $0 } else if (expect == "role") role = $0
  else if (expect == "availability-zone") zone = $0
  else if (expect == "health") health = $0
  else if (expect == "replication-offset") off = $0 + 0
  expect = ""; next
}
$0 == "slots" { flush(); shard++; inslots = 1; slotcount[shard] = 0; next }
$0 == "nodes" { inslots = 0; next }
inslots { slotcount[shard]++; next }
$0 == "id" || $0 == "port" || $0 == "ip" || $0 == "endpoint" || $0 == "hostname" || $0 == "role" || $0 == "replication-offset" || $0 == "health" || $0 == "availability-zone" || $0 == "tls-port" { expect = $0; next }
END {
  flush()
  total = 0
  for (i = 1; i <= n; i++) {
    # A failed old primary lingers in its shard as "master": only online primaries count.
    if (nrole[i] != "master" || slotcount[nshard[i]] == 0 || nhealth[i] != "online") continue
    if (nzone[i] == "") { print "wait primary " nid[i] " has no availability-zone"; exit }
    total++; primaries[nzone[i]]++; pzone[nshard[i]] = nzone[i]; poff[nshard[i]] = noff[i]
  }
  if (total == 0) { print "wait no primaries with slots"; exit }
  best = ""
  for (i = 1; i <= n; i++) {
    s = nshard[i]
    if (nrole[i] != "replica" || nhealth[i] != "online" || nzone[i] == "" || !(s in pzone)) continue
    if (2 * primaries[pzone[s]] <= total) continue
    if (2 * (primaries[nzone[i]] + 1) > total) continue
    if (poff[s] - noff[i] > maxlag) continue
    if (best == "" || (nid[i] "") < (best "")) best = nid[i]
  }
  if (best == "") { print "wait no zone holds a primary majority that a synced replica can fix"; exit }
  if (best != me) { print "wait " best " fails back first"; exit }
  print "act"
}
`;

export function renderAzFailbackScript(o: AzFailbackScriptOptions = {}): string {
  if (FAILBACK_DECISION_AWK.includes("'"))
    throw new Error("AZ failback: the awk program must not contain a single quote");
  const port = wholeNumber("port", o.port ?? VALKEY_PORT, 1);
  const interval = wholeNumber("intervalSeconds", o.intervalSeconds ?? 10, 1);
  const confirm = wholeNumber("confirmRounds", o.confirmRounds ?? 3, 1);
  const cooldown = wholeNumber("cooldownSeconds", o.cooldownSeconds ?? 60, 1);
  const maxLag = wholeNumber("maxLagBytes", o.maxLagBytes ?? 1024 * 1024, 0);
  const lines = [
    `#!/bin/sh`,
    `# AZ failback loop of a Valkey cluster member, rendered by valkey-on-eks. Usage: failback.sh [server-pid]`,
    `set -u`,
    `port=${port}`,
    localHostLine(o.localHost),
    `interval=${interval}`,
    `confirm=${confirm}`,
    `cooldown=${cooldown}`,
    `max_lag=${maxLag}`,
    `server_pid="\${1:-}"`,
    `log() { echo "failback: $*" >&2; }`,
    ...boundedCliLines(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
    `server_alive() { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }`,
    ...keepZoneLines(o.zoneFile),
    `decide_awk='${FAILBACK_DECISION_AWK}'`,
    `seen=0`,
    `last=""`,
    `while server_alive; do`,
    `  sleep "$interval"`,
    `  keep_zone`,
    `  case "$(local_cli cluster info 2>/dev/null)" in *cluster_state:ok*) ;; *) seen=0; continue ;; esac`,
    `  me=$(local_cli cluster myid 2>/dev/null) || continue`,
    `  shards=$(local_cli cluster shards 2>/dev/null) || continue`,
    `  decision=$(printf '%s\\n' "$shards" | awk -v me="$me" -v maxlag="$max_lag" "$decide_awk")`,
    `  if [ "$decision" != act ]; then`,
    `    [ "$decision" = "$last" ] || log "$decision"`,
    `    last=$decision`,
    `    seen=0`,
    `    continue`,
    `  fi`,
    `  seen=$((seen + 1))`,
    `  last=act`,
    `  [ "$seen" -ge "$confirm" ] || continue`,
    `  seen=0`,
    `  case "$(local_cli info replication 2>/dev/null)" in *master_link_status:up*) ;; *) log "my replication link is not up; not failing back"; continue ;; esac`,
    `  answer=$(local_cli cluster failover 2>&1) || true`,
    `  log "a zone held a primary majority; CLUSTER FAILOVER on $me answered: $answer"`,
    `  sleep "$cooldown"`,
    `done`,
  ];
  return lines.join("\n") + "\n";
}
