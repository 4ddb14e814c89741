/**
 * The cluster member's self-heal step (a POSIX sh script in the ConfigMap, started in the
 * background by the entrypoint just before it execs valkey-server).
 *
 * Why: nodes.conf on the data volume keeps every peer's last IP. When every member restarts on a
 * new IP at once (node-pool replacement, AZ drain, cluster upgrade) no survivor can gossip the
 * new addresses, so each node dials dead IPs forever and the cluster stays CLUSTERDOWN.
 * Announcing hostnames does not help: the bus connects by IP.
 *
 * What it does, once per container start:
 * 1. waits until the local server answers PING (it may be loading its AOF);
 * 2. reads CLUSTER NODES; a node that knows no peer is a new member (the bootstrap introduces
 *    it): nothing to do;
 * 3. for every peer, resolves the peer's announced hostname (its stable pod DNS name, stored in
 *    nodes.conf; the headless Service publishes not-ready addresses, so it resolves while pods
 *    start) with `getent hosts`; when the name resolves to an address other than the one on
 *    record, asks the server there for CLUSTER MYID and, only if that is the peer's node ID, sends
 *    `CLUSTER MEET <new ip> <port> <bus port>` (a MEET to a known node makes Valkey update that
 *    node's address when the handshake completes);
 * 4. stops once `cluster_state:ok`, every peer's link is up and every peer answers CLUSTER MYID
 *    with its node ID at the address on record; or when the server is gone, or after the
 *    deadline. It never forgets nodes or touches slots.
 *
 * Why ask each peer: right after a start, every peer loaded from nodes.conf reads "connected"
 * while the bus dials it, and `cluster_state:ok` is the state saved before the restart. On
 * loopback a dead address refuses at once, so the link drops and a heal sees it; a deleted pod's
 * IP answers nothing, the dial hangs, and the first version of this script exited "healed" within
 * a second of a full restart on real pods (kube:local), leaving a cluster that never healed. Nor
 * is DNS proof: for a while after the restart it may still give the old address (the endpoints
 * and CoreDNS's cache lag), which is why a peer is asked, not looked up.
 *
 * The identity check keeps a reused IP (another pod, another cluster) from being merged in.
 * `$VALKEY_HEAL_HOSTS_FILE` (lines `ip name`), when set, replaces DNS: the local real-process
 * tests use it; pods leave it unset. Every valkey-cli call is bounded (sh-cli.ts); the password
 * is only in REDISCLI_AUTH / VALKEYCLI_AUTH.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import {
  boundedCliLines,
  deadlineLines,
  DEFAULT_CLI_TIMEOUT_SECONDS,
  localHostLine,
  waitForPingLines,
} from "./sh-cli.js";

export interface ClusterHealScriptOptions {
  /** This node's client port. @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Seconds between rounds. @default 2 */
  intervalSeconds?: number;
  /** Give up after this many seconds from container start. @default 600 */
  deadlineSeconds?: number;
  /** Bound of one valkey-cli call. @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

export const DEFAULT_HEAL_DEADLINE_SECONDS = 600;
export const DEFAULT_HEAL_INTERVAL_SECONDS = 2;

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new Error(`cluster heal: ${name} must be a whole number >= 1, got ${v}`);
  return v;
}

export function renderClusterHealScript(o: ClusterHealScriptOptions = {}): string {
  const port = positiveInt("port", o.port ?? VALKEY_PORT);
  const interval = positiveInt("intervalSeconds", o.intervalSeconds ?? DEFAULT_HEAL_INTERVAL_SECONDS);
  const deadline = positiveInt("deadlineSeconds", o.deadlineSeconds ?? DEFAULT_HEAL_DEADLINE_SECONDS);
  const lines = [
    `#!/bin/sh`,
    `# Cluster self-heal of a Valkey member, rendered by valkey-on-eks. Usage: heal.sh [server-pid]`,
    `# Re-meets peers whose addresses changed (by their stable DNS names) until cluster_state:ok.`,
    `set -u`,
    `set -f`,
    `port=${port}`,
    localHostLine(o.localHost),
    `interval=${interval}`,
    `deadline=${deadline}`,
    `server_pid="\${1:-}"`,
    `log() { echo "heal: $*" >&2; }`,
    `nl='`,
    `'`,
    ...boundedCliLines(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
    ...deadlineLines(),
    `# The first address of a name: $VALKEY_HEAL_HOSTS_FILE (tests) or the system resolver.`,
    `resolve() {`,
    `  if [ -n "\${VALKEY_HEAL_HOSTS_FILE:-}" ]; then`,
    `    while read -r r_ip r_name _; do [ "$r_name" = "$1" ] && { echo "$r_ip"; return 0; }; done < "$VALKEY_HEAL_HOSTS_FILE"`,
    `    return 1`,
    `  fi`,
    `  getent hosts "$1" | { read -r r_ip _ && echo "$r_ip"; }`,
    `}`,
    ``,
    ...waitForPingLines(),
    ``,
    `while :; do`,
    `  server_alive || exit 0`,
    `  expired && { log "cluster_state is still not ok after \${deadline}s; giving up"; exit 0; }`,
    `  if nodes=$(local_cli cluster nodes 2>/dev/null) && [ -n "$nodes" ]; then`,
    `    peers=0`,
    `    down=0`,
    `    # Peers whose link reads connected: "id ip port" lines, proven by asking them (below).`,
    `    linked=`,
    `    while IFS= read -r line; do`,
    `      set -- $line`,
    `      [ $# -ge 8 ] || continue`,
    `      case "$3" in *myself*|*handshake*) continue ;; esac`,
    `      peers=$((peers + 1))`,
    `      id=$1`,
    `      link=$8`,
    `      # ip:port@cport[,hostname[,aux...]]`,
    `      addr=$2`,
    `      hostport=\${addr%%@*}`,
    `      old_ip=\${hostport%:*}`,
    `      peer_port=\${hostport##*:}`,
    `      bus=\${addr#*@}`,
    `      bus=\${bus%%,*}`,
    `      name=`,
    `      case "$addr" in *,*) name=\${addr#*,}; name=\${name%%,*} ;; esac`,
    `      new_ip=`,
    `      [ -z "$name" ] || new_ip=$(resolve "$name") || new_ip=`,
    `      if [ -z "$new_ip" ] || [ "$new_ip" = "$old_ip" ]; then`,
    `        # Nothing to re-meet (no name, not resolvable yet, or DNS still gives the address on record).`,
    `        if [ "$link" = connected ]; then linked="$linked$id $old_ip $peer_port$nl"; else down=$((down + 1)); fi`,
    `        continue`,
    `      fi`,
    `      down=$((down + 1))`,
    `      their_id=$(cli -h "$new_ip" -p "$peer_port" cluster myid 2>/dev/null) || continue`,
    `      [ "$their_id" = "$id" ] || { log "$name at $new_ip is node '$their_id', not $id; not meeting it"; continue; }`,
    `      if answer=$(local_cli cluster meet "$new_ip" "$peer_port" "$bus" 2>&1) && [ "$answer" = OK ]; then`,
    `        log "met $name ($id) at its new address $new_ip:$peer_port (was $old_ip)"`,
    `      else`,
    `        log "CLUSTER MEET $new_ip $peer_port $bus answered: $answer"`,
    `      fi`,
    `    done <<EOF`,
    `$nodes`,
    `EOF`,
    `    if [ "$peers" -eq 0 ]; then`,
    `      log "no peers in nodes.conf: a new member, the bootstrap introduces it"`,
    `      exit 0`,
    `    fi`,
    `    case "$(local_cli cluster info 2>/dev/null)" in`,
    `      *cluster_state:ok*) ;;`,
    `      *) down=$((down + 1)) ;;`,
    `    esac`,
    `    # "connected" and cluster_state:ok are not proof right after a start (see above): every`,
    `    # linked peer must answer CLUSTER MYID with its node ID at the address on record.`,
    `    if [ "$down" -eq 0 ]; then`,
    `      while read -r l_id l_ip l_port; do`,
    `        [ -n "$l_id" ] || continue`,
    `        [ "$(cli -h "$l_ip" -p "$l_port" cluster myid 2>/dev/null)" = "$l_id" ] || { down=$((down + 1)); break; }`,
    `      done <<EOF`,
    `$linked`,
    `EOF`,
    `      [ "$down" -eq 0 ] && { log "cluster_state:ok with all $peers peers connected, each answering at its address"; exit 0; }`,
    `    fi`,
    `  fi`,
    `  sleep "$interval"`,
    `done`,
  ];
  return lines.join("\n") + "\n";
}
