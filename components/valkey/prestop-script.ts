/**
 * The cluster member's preStop hook (a POSIX sh script in the ConfigMap). A primary that serves
 * slots and has a connected, healthy replica hands its slots over before it stops: it runs
 * `CLUSTER FAILOVER` on that replica and waits until the replica reports itself primary and
 * this node reports itself replica. Anything else (a replica, a primary without slots or
 * replica, a server that does not answer) lets the pod stop at once. valkey-cli takes the
 * password from VALKEYCLI_AUTH / REDISCLI_AUTH in the container environment, never from argv.
 */
import { VALKEY_PORT } from "../shared.js";

export interface PreStopScriptOptions {
  /** This node's client port. @default VALKEY_PORT */
  port?: number;
  /** How long to wait for the role switch; keep it below terminationGracePeriodSeconds. @default 30 */
  timeoutSeconds?: number;
}

export const DEFAULT_FAILOVER_TIMEOUT_SECONDS = 30;

export function renderPreStopScript(o: PreStopScriptOptions = {}): string {
  const port = o.port ?? VALKEY_PORT;
  const timeout = o.timeoutSeconds ?? DEFAULT_FAILOVER_TIMEOUT_SECONDS;
  return `#!/bin/sh
# preStop hook of a Valkey cluster member, rendered by valkey-on-eks.
set -u
port=${port}
timeout=${timeout}
cli="\${VALKEY_CLI:-valkey-cli}"
log() { echo "prestop: $*" >&2; }
role_of() { "$cli" -h "$1" -p "$2" role 2>/dev/null | { IFS= read -r first || true; echo "$first"; }; }

nodes=$("$cli" -h 127.0.0.1 -p "$port" cluster nodes 2>/dev/null) || { log "CLUSTER NODES failed; stopping"; exit 0; }
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

replica=""
while IFS= read -r line; do
  set -- $line
  [ $# -ge 8 ] || continue
  [ "$4" = "$my_id" ] && [ "$8" = "connected" ] || continue
  case "$3" in *fail*|*handshake*|*noaddr*|*nofailover*) continue ;; *slave*) replica=$2; break ;; esac
done <<EOF
$nodes
EOF
[ -n "$replica" ] || { log "no healthy replica of $my_id; stopping without failover"; exit 0; }

# ip:port@cport[,hostname]; connect by IP, or by hostname when no IP is known.
hostport=\${replica%%@*}
rport=\${hostport##*:}
rhost=\${hostport%:*}
case "$replica" in *,*) [ -n "$rhost" ] || rhost=\${replica#*,} ;; esac
log "handing the slots of $my_id to its replica $rhost:$rport"
answer=$("$cli" -h "$rhost" -p "$rport" cluster failover 2>&1) || true
case "$answer" in OK*) ;; *) log "CLUSTER FAILOVER answered: $answer"; exit 0 ;; esac

waited=0
while [ "$waited" -lt "$timeout" ]; do
  if [ "$(role_of "$rhost" "$rport")" = "master" ] && [ "$(role_of 127.0.0.1 "$port")" = "slave" ]; then
    log "failover done: $rhost:$rport is primary"
    exit 0
  fi
  sleep 1
  waited=$((waited + 1))
done
log "the role switch was not seen within \${timeout}s; stopping anyway"
exit 0
`;
}
