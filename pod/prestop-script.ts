/**
 * The cluster member's preStop hook (a POSIX sh script in the ConfigMap). A primary that serves
 * slots hands them over before it stops: it runs `CLUSTER FAILOVER` on a SYNCED replica and waits
 * until that replica reports itself primary and this node reports itself replica.
 *
 * Synced means, asked of the replica itself: `master_link_status:up`, no sync in progress, and
 * `slave_repl_offset` within `maxLagBytes` of this primary's `master_repl_offset` (the manual
 * failover then closes the last gap with clients paused). Of several, the one with the highest
 * offset. A replica still in its initial sync or cut off from this primary is never chosen: the
 * pod then stops without a failover and the cluster's own failure detection takes over, which is
 * no worse than promoting a replica that lacks data.
 *
 * Anything else (a replica, a primary without slots or synced replica, a server that does not
 * answer) lets the pod stop at once. Every valkey-cli call is bounded (sh-cli.ts), so a hung
 * connect cannot eat the grace period; the password comes from VALKEYCLI_AUTH / REDISCLI_AUTH in
 * the container environment, never from argv.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { boundedCliLines, DEFAULT_CLI_TIMEOUT_SECONDS, localHostLine } from "./sh-cli.js";

export interface PreStopScriptOptions {
  /** This node's client port. @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** How long to wait for the role switch; keep it below terminationGracePeriodSeconds. @default 30 */
  timeoutSeconds?: number;
  /** A replica further behind than this (bytes of replication stream) is not chosen. @default 1 MiB */
  maxLagBytes?: number;
  /** Bound of one valkey-cli call. @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

export const DEFAULT_FAILOVER_TIMEOUT_SECONDS = 30;
export const DEFAULT_MAX_FAILOVER_LAG_BYTES = 1024 * 1024;

export function renderPreStopScript(o: PreStopScriptOptions = {}): string {
  const port = o.port ?? VALKEY_PORT;
  const timeout = o.timeoutSeconds ?? DEFAULT_FAILOVER_TIMEOUT_SECONDS;
  const maxLag = o.maxLagBytes ?? DEFAULT_MAX_FAILOVER_LAG_BYTES;
  if (!Number.isInteger(maxLag) || maxLag < 0)
    throw new Error(`preStop: maxLagBytes must be a whole number >= 0, got ${maxLag}`);
  const cliLines = boundedCliLines(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS).join("\n");
  return `#!/bin/sh
# preStop hook of a Valkey cluster member, rendered by valkey-on-eks.
set -u
port=${port}
${localHostLine(o.localHost)}
timeout=${timeout}
max_lag=${maxLag}
nl='
'
log() { echo "prestop: $*" >&2; }
${cliLines}
role_of() { cli -h "$1" -p "$2" role 2>/dev/null | { IFS= read -r first || true; echo "$first"; }; }
# The value of an INFO field ($2) in INFO text ($1): letters, digits and _ only.
info_field() {
  v=\${1#*"$nl$2":}
  [ "$v" != "$1" ] || return 1
  printf '%s' "\${v%%[!0-9A-Za-z_]*}"
}

nodes=$(local_cli cluster nodes 2>/dev/null) || { log "CLUSTER NODES failed; stopping"; exit 0; }
set -f
my_id=""
my_flags=""
my_slots=0
while IFS= read -r line; do
  set -- $line
  [ $# -ge 8 ] || continue
  case "$3" in *myself*) my_id=$1; my_flags=$3; [ $# -ge 9 ] && my_slots=1 ;; esac
done <<EOF
$nodes
EOF
case "$my_flags" in *master*) ;; *) log "not a primary; stopping"; exit 0 ;; esac
[ "$my_slots" -eq 1 ] || { log "primary without slots; stopping"; exit 0; }
my_info=$(local_cli info replication 2>/dev/null) || { log "INFO replication failed; stopping"; exit 0; }
my_offset=$(info_field "$my_info" master_repl_offset) || { log "no master_repl_offset; stopping"; exit 0; }

best_host=""
best_port=""
best_offset=-1
while IFS= read -r line; do
  set -- $line
  [ $# -ge 8 ] || continue
  [ "$4" = "$my_id" ] && [ "$8" = "connected" ] || continue
  case "$3" in *fail*|*handshake*|*noaddr*|*nofailover*) continue ;; *slave*) ;; *) continue ;; esac
  # ip:port@cport[,hostname]; connect by IP, or by hostname when no IP is known.
  hostport=\${2%%@*}
  rport=\${hostport##*:}
  rhost=\${hostport%:*}
  case "$2" in *,*) [ -n "$rhost" ] || { rhost=\${2#*,}; rhost=\${rhost%%,*}; } ;; esac
  rinfo=$(cli -h "$rhost" -p "$rport" info replication 2>/dev/null) || { log "replica $rhost:$rport did not answer; not choosing it"; continue; }
  link=$(info_field "$rinfo" master_link_status) || link=unknown
  [ "$link" = up ] || { log "replica $rhost:$rport has master_link_status:$link; not choosing it"; continue; }
  [ "$(info_field "$rinfo" master_sync_in_progress)" = 0 ] || { log "replica $rhost:$rport is syncing; not choosing it"; continue; }
  roffset=$(info_field "$rinfo" slave_repl_offset) || { log "replica $rhost:$rport reports no offset; not choosing it"; continue; }
  lag=$((my_offset - roffset))
  [ "$lag" -le "$max_lag" ] || { log "replica $rhost:$rport is $lag bytes behind; not choosing it"; continue; }
  if [ "$roffset" -gt "$best_offset" ]; then best_host=$rhost; best_port=$rport; best_offset=$roffset; fi
done <<EOF
$nodes
EOF
[ -n "$best_host" ] || { log "no synced replica of $my_id; stopping without failover"; exit 0; }

log "handing the slots of $my_id to its synced replica $best_host:$best_port (offset $best_offset of $my_offset)"
answer=$(cli -h "$best_host" -p "$best_port" cluster failover 2>&1) || true
case "$answer" in OK*) ;; *) log "CLUSTER FAILOVER answered: $answer"; exit 0 ;; esac

waited=0
while [ "$waited" -lt "$timeout" ]; do
  if [ "$(role_of "$best_host" "$best_port")" = "master" ] && [ "$(role_of "$local_host" "$port")" = "slave" ]; then
    log "failover done: $best_host:$best_port is primary"
    exit 0
  fi
  sleep 1
  waited=$((waited + 1))
done
log "the role switch was not seen within \${timeout}s; stopping anyway"
exit 0
`;
}
