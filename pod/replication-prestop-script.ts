/**
 * The replication member's preStop hook (a POSIX sh script in the ConfigMap). A member that is
 * the primary hands over to a replica through the Sentinels before it stops, so a voluntary
 * eviction (node drain, rollout) costs a switchover of a few seconds instead of a
 * `down-after-milliseconds` outage, and loses no write a replica confirmed (WAIT). Any other
 * member stops at once.
 *
 * Why not a bare `SENTINEL FAILOVER`: it promotes a replica with `REPLICAOF NO ONE` while the old
 * primary keeps accepting writes; the replicas not yet re-pointed keep replicating them and
 * acknowledge WAIT for them, then lose them when Sentinel re-points them at the new primary
 * (their offset is past the promotion point, so they resynchronise in full). Measured: 94-202
 * WAIT-confirmed writes lost per drill (benchmarks/drill, `--fault switchover`). So, on the
 * primary:
 *   1. `CLIENT PAUSE <ms> WRITE` on this server: writes (and WAIT) block, reads go on; the
 *      replication stream stops growing (pause also stops the replication PINGs);
 *   2. wait (at most `catchUpSeconds`) until every replica acknowledged this primary's final
 *      offset (INFO replication, slaveN offset=), so whichever replica Sentinel picks has every
 *      write, and the others can continue from it with a partial resync; a replica the primary
 *      still lists behind is asked itself (INFO replication, slave_repl_offset), because the
 *      primary hears of its offset only at its once-a-second ack, and under the write pause WAIT
 *      does not ask for one (measured: WAIT 1 returned after 0.77-0.85 s paused, ~1 ms not);
 *   3. `SENTINEL FAILOVER` on the first Sentinel that answers OK or INPROG, asking again every
 *      second for up to `failoverRetrySeconds` while none does: a Sentinel answers NOGOODSLAVE
 *      while it does not see a replica up, e.g. one that came back on a new pod IP it has not
 *      resolved yet (measured on real pods: the switchover then fell back to down-after, 8.5 s
 *      of failed writes instead of ~3 s); the writes stay paused meanwhile, nothing is lost;
 *   4. once a Sentinel names another member, `REPLICAOF <it>` on this server (what Sentinel
 *      itself would do some seconds later), THEN `CLIENT UNPAUSE`: the writes held by the pause
 *      run on a replica and fail with READONLY (never acknowledged), and the clients move over.
 * The pause is bounded twice: it expires by itself at the preStop's deadline (`timeoutSeconds`
 * after the start), and the script releases it on every way out (EXIT/INT/TERM trap). If no
 * Sentinel accepts the failover, or no other member becomes primary before the deadline, the
 * pause is released and the pod stops (the Sentinels' failure detection takes over).
 * Valkey 9 also has `SENTINEL FAILOVER <name> COORDINATED` (the primary runs `FAILOVER TO`);
 * this script keeps to the bare command every Sentinel version has and does the pause itself.
 *
 * Every valkey-cli call is bounded (sh-cli.ts). The password comes from VALKEYCLI_AUTH /
 * REDISCLI_AUTH in the container environment (the Sentinels require the same one), never argv.
 *
 * Environment: VALKEY_ANNOUNCE_HOST (this member's stable name, what the Sentinels report),
 * optional VALKEY_ANNOUNCE_IP, VALKEY_CLI. The Sentinels' list is rendered in.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { shQuote } from "./sh-cli.js";
import { boundedCliLines, DEFAULT_CLI_TIMEOUT_SECONDS, localHostLine } from "./sh-cli.js";

export interface ReplicationPreStopOptions {
  masterName: string;
  /** `host:port` of every Sentinel. */
  sentinels: readonly string[];
  /** @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /**
   * The preStop's deadline, from its start: the longest the writes stay paused and the longest
   * the script runs (plus one bounded cli call). Keep it below terminationGracePeriodSeconds.
   * @default 30
   */
  timeoutSeconds?: number;
  /** Longest wait, writes paused, for the replicas to acknowledge the final offset. @default 5 */
  catchUpSeconds?: number;
  /** How long to keep asking the Sentinels while none accepts the failover (writes paused). @default min(10, timeoutSeconds − 1) */
  failoverRetrySeconds?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

export const DEFAULT_SWITCHOVER_TIMEOUT_SECONDS = 30;
export const DEFAULT_SWITCHOVER_CATCH_UP_SECONDS = 5;
export const DEFAULT_SWITCHOVER_RETRY_SECONDS = 10;

export function renderReplicationPreStopScript(o: ReplicationPreStopOptions): string {
  const timeout = o.timeoutSeconds ?? DEFAULT_SWITCHOVER_TIMEOUT_SECONDS;
  const catchUp = o.catchUpSeconds ?? DEFAULT_SWITCHOVER_CATCH_UP_SECONDS;
  if (!Number.isInteger(timeout) || timeout < 2)
    throw new Error(`preStop: timeoutSeconds must be a whole number ≥ 2 (got ${timeout})`);
  if (!Number.isInteger(catchUp) || catchUp < 1 || catchUp >= timeout) {
    throw new Error(
      `preStop: catchUpSeconds must be a whole number ≥ 1 and below timeoutSeconds ${timeout} (got ${catchUp})`,
    );
  }
  const retry = o.failoverRetrySeconds ?? Math.min(DEFAULT_SWITCHOVER_RETRY_SECONDS, timeout - 1);
  if (!Number.isInteger(retry) || retry < 0 || retry >= timeout) {
    throw new Error(
      `preStop: failoverRetrySeconds must be a whole number ≥ 0 and below timeoutSeconds ${timeout} (got ${retry})`,
    );
  }
  if (!/^[A-Za-z0-9._-]+$/.test(o.masterName))
    throw new Error(`preStop: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  if (o.sentinels.length === 0) throw new Error("preStop: sentinels must name at least one Sentinel");
  for (const s of o.sentinels)
    if (!/^[^\s,:']+:\d+$/.test(s)) throw new Error(`preStop: sentinel '${s}' is not host:port`);
  const cliLines = boundedCliLines(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS).join("\n");
  return `#!/bin/sh
# preStop hook of a replication member under Sentinel, rendered by valkey-on-eks.
set -u
port=${o.port ?? VALKEY_PORT}
${localHostLine(o.localHost)}
timeout_s=${timeout}
catch_up_s=${catchUp}
failover_retry_s=${retry}
master_name=${shQuote(o.masterName)}
sentinels=${shQuote(o.sentinels.join(" "))}
self_host="\${VALKEY_ANNOUNCE_HOST:-}"
log() { echo "prestop: $*" >&2; }
${cliLines}
now_s() { date +%s; }
# A tenth of a second where sleep takes fractions (coreutils, busybox), else a second.
nap() { sleep 0.1 2>/dev/null || sleep 1; }
deadline=$(($(now_s) + timeout_s))

role=$(local_cli --raw role 2>/dev/null | head -n 1)
[ "$role" = master ] || { log "not the primary (role: \${role:-unknown}); stopping"; exit 0; }
is_me() { [ "\${1#* }" = "$port" ] && { [ "\${1% *}" = "$self_host" ] || [ "\${1% *}" = "\${VALKEY_ANNOUNCE_IP:-}" ] || [ "\${1% *}" = "$local_host" ]; }; }
# The primary a Sentinel names ("host port"), empty when it does not answer.
named_by() { cli -h "\${1%:*}" -p "\${1##*:}" --raw SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name" 2>/dev/null | tr '\\n' ' ' | sed 's/ *$//'; }

# 1. Pause writes until the deadline at most; released on every way out.
paused=""
release() {
  [ -n "$paused" ] || return 0
  paused=""
  r=$(local_cli CLIENT UNPAUSE 2>&1) || true
  log "writes unpaused ($r)"
}
trap release EXIT
trap 'exit 1' INT TERM HUP
pause_ms=$(((deadline - $(now_s)) * 1000))
r=$(local_cli CLIENT PAUSE "$pause_ms" WRITE 2>&1) || true
case "$r" in
  OK*) paused=1; log "writes paused for at most \${pause_ms} ms" ;;
  *) log "CLIENT PAUSE failed ($r); failing over without the pause (writes in flight may be lost)" ;;
esac

# 2. Until every replica holds this primary's final offset (bounded). The primary learns a replica's
#    offset from its acknowledgements, once a second, and while writes are paused it does not ask
#    sooner (WAIT sends no REPLCONF GETACK under CLIENT PAUSE WRITE: measured, WAIT 1 returned after
#    0.77-0.85 s, against ~1 ms unpaused). So each replica the primary still lists behind is asked
#    itself what it applied (INFO replication, slave_repl_offset), which it knows at once.
lagging="unknown"
# Whether the replica of an INFO replication slaveN line ("ip=...,port=...,state=...,offset=...")
# applied $offset, asked itself with a 1 s bound; one that does not answer is not asked again (a
# frozen or cut-off replica would otherwise hold every look for the cli timeout): the primary's
# view of it (its acks) still counts.
silent=""
applied() {
  r_ip=$(printf '%s' "$1" | sed -n 's/.*[:,]ip=\\([^,]*\\),.*/\\1/p')
  r_port=$(printf '%s' "$1" | sed -n 's/.*,port=\\([0-9]*\\),.*/\\1/p')
  [ -n "$r_ip" ] && [ -n "$r_port" ] || return 1
  case " $silent " in *" $r_ip:$r_port "*) return 1 ;; esac
  saved_timeout=$cli_timeout; cli_timeout=1
  theirs=$(cli -h "$r_ip" -p "$r_port" --raw INFO replication 2>/dev/null | tr -d '\\r' | sed -n 's/^slave_repl_offset://p')
  cli_timeout=$saved_timeout
  [ -n "$theirs" ] || { silent="$silent $r_ip:$r_port"; return 1; }
  [ "$theirs" -ge "$offset" ]
}
if [ -n "$paused" ]; then
  looks=0
  catch_up_until=$(($(now_s) + catch_up_s))
  [ "$catch_up_until" -le "$deadline" ] || catch_up_until=$deadline
  while [ "$(now_s)" -lt "$catch_up_until" ]; do
    looks=$((looks + 1))
    info=$(local_cli --raw INFO replication 2>/dev/null | tr -d '\\r')
    offset=$(printf '%s\\n' "$info" | sed -n 's/^master_repl_offset://p')
    replicas=$(printf '%s\\n' "$info" | grep -c '^slave[0-9]*:')
    lagging=0
    if [ -n "$offset" ]; then
      for line in $(printf '%s\\n' "$info" | grep '^slave[0-9]*:' | grep -v ",offset=$offset,"); do
        applied "$line" || lagging=$((lagging + 1))
      done
    fi
    if [ -n "$offset" ] && [ "$replicas" -gt 0 ] && [ "$lagging" -eq 0 ]; then
      log "all $replicas replicas at offset $offset (look $looks, a tenth of a second apart)"
      break
    fi
    nap
  done
  [ "$lagging" = 0 ] || log "replicas not all at the final offset after \${catch_up_s}s ($lagging behind of \${replicas:-?}); failing over anyway"
fi

# 3. Ask one Sentinel at a time; again every second while none accepts (NOGOODSLAVE: it does not
#    see a replica up yet), for failover_retry_s at most and never past the deadline.
asked=""
retry_until=$(($(now_s) + failover_retry_s))
[ "$retry_until" -le "$deadline" ] || retry_until=$deadline
while :; do
  for s in $sentinels; do
    reply=$(cli -h "\${s%:*}" -p "\${s##*:}" --raw SENTINEL FAILOVER "$master_name" 2>&1) || { log "Sentinel $s did not answer"; continue; }
    log "SENTINEL FAILOVER via $s: $reply"
    case "$reply" in OK*|INPROG*) asked=$s; break ;; esac
  done
  [ -z "$asked" ] && [ "$(now_s)" -lt "$retry_until" ] || break
  sleep 1
done
[ -n "$asked" ] || { log "no Sentinel accepted the failover; stopping (the Sentinels fail over after down-after-milliseconds)"; exit 0; }

# 4. Once another member is primary: follow it, then release the held writes (READONLY now).
while [ "$(now_s)" -lt "$deadline" ]; do
  for s in $asked $sentinels; do
    now=$(named_by "$s")
    case "$now" in *" "[0-9]*) ;; *) continue ;; esac
    is_me "$now" && continue
    log "switchover done: $s names $now the primary"
    r=$(local_cli REPLICAOF "\${now% *}" "\${now#* }" 2>&1) || true
    log "REPLICAOF \${now% *} \${now#* }: $r"
    exit 0
  done
  nap
done
log "no other member became primary within \${timeout_s}s; stopping anyway"
exit 0
`;
}
