/**
 * The replication member's preStop hook (a POSIX sh script in the ConfigMap). A member that is
 * the primary asks the Sentinels for `SENTINEL FAILOVER` before it stops, and waits until the
 * Sentinels name another member, so a voluntary eviction (node drain, rollout) costs a
 * switchover of about a second instead of a `down-after-milliseconds` outage. Any other member
 * stops at once.
 *
 * One Sentinel is asked at a time (the first that answers OK or INPROG); every valkey-cli call
 * is bounded (sh-cli.ts); the wait is bounded by `timeoutSeconds`, after which the pod stops
 * anyway and the Sentinels' failure detection takes over. The password comes from
 * VALKEYCLI_AUTH / REDISCLI_AUTH in the container environment (the Sentinels require the same
 * password), never from argv.
 *
 * Environment: VALKEY_ANNOUNCE_HOST (this member's stable name, what the Sentinels report),
 * optional VALKEY_ANNOUNCE_IP, VALKEY_SENTINELS (overrides the rendered list), VALKEY_CLI.
 */
import { VALKEY_PORT } from "../shared.js";
import { shQuote } from "./start-script.js";
import { boundedCliLines, DEFAULT_CLI_TIMEOUT_SECONDS, localHostLine } from "./sh-cli.js";

export interface ReplicationPreStopOptions {
  masterName: string;
  /** `host:port` of every Sentinel. */
  sentinels: readonly string[];
  /** @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Longest wait for another member to become primary; keep it below terminationGracePeriodSeconds. @default 30 */
  timeoutSeconds?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

export const DEFAULT_SWITCHOVER_TIMEOUT_SECONDS = 30;

export function renderReplicationPreStopScript(o: ReplicationPreStopOptions): string {
  const timeout = o.timeoutSeconds ?? DEFAULT_SWITCHOVER_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeout) || timeout < 1) throw new Error(`preStop: timeoutSeconds must be a whole number ≥ 1 (got ${timeout})`);
  if (!/^[A-Za-z0-9._-]+$/.test(o.masterName)) throw new Error(`preStop: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  if (o.sentinels.length === 0) throw new Error("preStop: sentinels must name at least one Sentinel");
  for (const s of o.sentinels) if (!/^[^\s,:]+:\d+$/.test(s)) throw new Error(`preStop: sentinel '${s}' is not host:port`);
  return (
    [
      `#!/bin/sh`,
      `# preStop hook of a replication member under Sentinel, rendered by valkey-on-eks.`,
      `set -u`,
      `port=${o.port ?? VALKEY_PORT}`,
      localHostLine(o.localHost),
      `timeout_s=${timeout}`,
      `master_name=${shQuote(o.masterName)}`,
      `sentinels=$(printf '%s' "\${VALKEY_SENTINELS:-${o.sentinels.join(" ")}}" | tr ',' ' ')`,
      `self_host="\${VALKEY_ANNOUNCE_HOST:-}"`,
      `log() { echo "prestop: $*" >&2; }`,
      ...boundedCliLines(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
      `role=$(local_cli --raw role 2>/dev/null | head -n 1)`,
      `[ "$role" = master ] || { log "not the primary (role: \${role:-unknown}); stopping"; exit 0; }`,
      `is_me() { [ "\${1#* }" = "$port" ] && { [ "\${1% *}" = "$self_host" ] || [ "\${1% *}" = "\${VALKEY_ANNOUNCE_IP:-}" ] || [ "\${1% *}" = "$local_host" ]; }; }`,
      `# The primary a Sentinel names ("host port"), empty when it does not answer.`,
      `named_by() { cli -h "\${1%:*}" -p "\${1##*:}" --raw SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name" 2>/dev/null | tr '\\n' ' ' | sed 's/ *$//'; }`,
      `asked=""`,
      `for s in $sentinels; do`,
      `  reply=$(cli -h "\${s%:*}" -p "\${s##*:}" --raw SENTINEL FAILOVER "$master_name" 2>&1) || { log "Sentinel $s did not answer"; continue; }`,
      `  log "SENTINEL FAILOVER via $s: $reply"`,
      `  case "$reply" in OK*|INPROG*) asked=$s; break ;; esac`,
      `done`,
      `[ -n "$asked" ] || { log "no Sentinel accepted the failover; stopping (the Sentinels fail over after down-after-milliseconds)"; exit 0; }`,
      `waited=0`,
      `while [ "$waited" -lt "$timeout_s" ]; do`,
      `  for s in $asked $sentinels; do`,
      `    now=$(named_by "$s")`,
      `    case "$now" in *" "[0-9]*) if ! is_me "$now"; then log "switchover done: $s names $now the primary"; exit 0; fi ;; esac`,
      `  done`,
      `  sleep 1`,
      `  waited=$((waited + 1))`,
      `done`,
      `log "no other member became primary within \${timeout_s}s; stopping anyway"`,
      `exit 0`,
    ].join("\n") + "\n"
  );
}
