/**
 * The Sentinel container's entrypoint (pod/scripts/sentinel-start.sh, in the ConfigMap): `sentinel.conf`
 * lives on the Sentinel's own volume, because Sentinel rewrites it with its state (epochs, the
 * current primary, known replicas and peers) and a restart must keep that state. So:
 *
 * - First start (no state file): the file is written from the ConfigMap's template
 *   (sentinel-conf.ts, no secret in it) plus the per-pod and secret lines: `sentinel
 *   announce-ip` = this pod's stable DNS name ($VALKEY_ANNOUNCE_HOST), and with auth
 *   `requirepass`, `sentinel sentinel-pass`, `sentinel auth-pass <master>` from the mounted
 *   password file (file → shell variable → builtin printf: never argv, never the manifest).
 * - Every start: `umask 077` before anything is written, so the file and Sentinel's own
 *   rewrites of it (created `0644 & ~umask`) stay private; then wait, bounded, until the
 *   monitored primary's name resolves (with `resolve-hostnames yes` Sentinel refuses a config
 *   whose names do not resolve; an IP address is not looked up), and exec
 *   `valkey-server <state file> --sentinel`, having started in the background the call that sets
 *   this Sentinel's INFO period (`SENTINEL DEBUG info-period`, SENTINEL_INFO_PERIOD_MS) once it answers,
 *   and the stalled-failover nudge: a loop that, while the primary is o_down and no Sentinel is
 *   failing over (an aborted attempt holds every Sentinel back for 2 × failover-timeout), has one
 *   Sentinel (the first by announced address that answers) ask `SENTINEL FAILOVER` (see the script).
 *
 * A password change therefore needs the state file re-made (delete the Sentinel's PVC); the
 * data members read the password at every start.
 */
import { renderShellFile } from "./shell-file.js";
import { cliTimeout, localHost } from "./sh-cli.js";

/**
 * The period of a Sentinel's INFO reads of the primary and its replicas, in ms (Valkey's is 10 s,
 * 1 s only while the primary is down or a replica's link is; sentinel.c sentinelSendPeriodicCommands).
 * At 10 s a replica that has just finished its first sync and taken a promotable priority
 * (replication-start.sh) stayed unpromotable in the Sentinels' view for up to 10 s more, and the
 * verifier with it: a healed topology read as not healed. At 1 s the Sentinels' view of replica
 * links, offsets, priorities and roles is at most a second old; the cost is one INFO per
 * monitored member per Sentinel per second. It also shortens Sentinel's "a primary that reports
 * itself a replica" rule (down-after + 2 × this) and its "primary looks sane" window (2 × this).
 */
export const SENTINEL_INFO_PERIOD_MS = 1000;

/**
 * The stalled-failover nudge (sentinel-start.sh): while no Sentinel picks a replica (NOGOODSLAVE),
 * the one Sentinel that asks asks again at most this often.
 */
export const SENTINEL_NUDGE_RETRY_SECONDS = 5;

export interface SentinelStartScriptOptions {
  /** The template in the ConfigMap (first start only). */
  templateFile: string;
  /** The state file on the Sentinel's volume. */
  stateFile: string;
  masterName: string;
  /** The password file (auth on); undefined = no auth lines. */
  passwordFile: string | undefined;
  /** Seconds to wait for the monitored primary's name to resolve. @default 60 */
  resolveWaitSeconds?: number;
  /** The Sentinel's port (the INFO-period call connects to it). */
  port: number;
  /** The address the INFO-period call connects to. @default 127.0.0.1 (a pod listens on every address) */
  localHost?: string;
  /** The INFO period set at every start, ms. @default SENTINEL_INFO_PERIOD_MS */
  infoPeriodMs?: number;
}

export function renderSentinelStartScript(o: SentinelStartScriptOptions): string {
  const wait = o.resolveWaitSeconds ?? 60;
  if (!Number.isInteger(wait) || wait < 1)
    throw new Error(`sentinel start: resolveWaitSeconds must be a whole number ≥ 1 (got ${wait})`);
  const infoPeriod = o.infoPeriodMs ?? SENTINEL_INFO_PERIOD_MS;
  if (!Number.isInteger(infoPeriod) || infoPeriod < 100)
    throw new Error(`sentinel start: infoPeriodMs must be a whole number ≥ 100 (got ${infoPeriod})`);
  if (!/^[A-Za-z0-9._-]+$/.test(o.masterName))
    throw new Error(`sentinel start: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  return renderShellFile("sentinel-start.sh", {
    template: o.templateFile,
    state: o.stateFile,
    master_name: o.masterName,
    password_file: o.passwordFile ?? "",
    resolve_wait: wait,
    info_period: infoPeriod,
    local_host: localHost(o.localHost),
    port: o.port,
    cli_timeout: cliTimeout(),
    nudge_retry: SENTINEL_NUDGE_RETRY_SECONDS,
  });
}
