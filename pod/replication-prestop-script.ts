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
 * WAIT-confirmed writes lost per drill (harness/drill, `--fault switchover`). So, on the
 * primary:
 *   first, the Sentinels in TILT read (`INFO sentinel`, again before each retry of step 3): one in
 *      TILT answers SENTINEL FAILOVER with OK and acts only once out of TILT (30 s or more), so it
 *      is neither aimed with nor asked while another answers out of TILT (all in TILT: asked);
 *   then the replication PING held off (`repl-ping-replica-period` 3600 until the script
 *      ends): the pause does not stop it, and one PING after the promotion leaves this server and
 *      the replicas still attached to it ahead of the new primary, so each needs a full resync;
 *   0. aim (writes still flow): steer the first Sentinel's pick to one replica (replica-priority 1
 *      until the script ends; the others keep theirs), wait until that Sentinel has read it so,
 *      and start the pause a lead before its next read of that replica, so the promotion lands
 *      just before the read that confirms it (see the script). The lead is `aimLeadMs` plus three
 *      times the slowest Sentinel call the aim saw (at most a period): a starved pod's calls after
 *      the pause are as slow;
 *   1. `CLIENT PAUSE <ms> WRITE` on this server: writes (and WAIT) block, reads go on;
 *   2. wait (at most `catchUpSeconds`) until every replica acknowledged this primary's final
 *      offset (INFO replication, slaveN offset=), so whichever replica Sentinel picks has every
 *      write, and the others can continue from it with a partial resync; a replica the primary
 *      still lists behind is asked itself (INFO replication, slave_repl_offset), because the
 *      primary hears of its offset only at its once-a-second ack, and under the write pause WAIT
 *      does not ask for one (measured: WAIT 1 returned after 0.77-0.85 s paused, ~1 ms not);
 *   3. `SENTINEL FAILOVER` on the first Sentinel that answers OK or INPROG, asked only of the
 *      Sentinels that name this member the primary (read with the TILT states): the command fails
 *      over the primary the asked Sentinel names, and one whose view is behind (a switchover moments
 *      ago, its hello not yet in) would fail over the previous primary in a new epoch, possibly the
 *      same epoch as the switchover's (a forced failover asks no votes), which splits the Sentinels
 *      until the next failover; when every one that answers names another member, this member
 *      follows theirs (step 4) and asks none. Asking again every
 *      second for up to `failoverRetrySeconds` while none does: a Sentinel answers NOGOODSLAVE
 *      while it does not see a replica up, e.g. one that came back on a new pod IP it has not
 *      resolved yet (measured on real pods: the switchover then fell back to down-after, 8.5 s
 *      of failed writes instead of ~3 s); the writes stay paused meanwhile, nothing is lost;
 *   4. once a Sentinel names another member, `REPLICAOF <it>` on this server (what Sentinel
 *      itself would do some seconds later), THEN `CLIENT UNPAUSE`: the writes held by the pause
 *      run on a replica and fail with READONLY (never acknowledged), and the clients move over;
 *   5. a Sentinel (not in TILT) still naming this member 300 ms later gets the teller's
 *      `SENTINEL DEBUG publish-period` lowered to 100 ms until it follows (1 s at most), then given
 *      back: Valkey drops the hello the teller forces at the promotion when a hello sent just before
 *      is answered after it, and the others then learn a publish period (2 s) later, which the
 *      write endpoint (a Sentinel majority) waits out (1 failover in 35 on real pods: 2.8 s).
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
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { SENTINEL_INFO_PERIOD_MS } from "./sentinel-start-script.js";
import { renderShellFile } from "./shell-file.js";

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
  /**
   * How long to keep asking the Sentinels while none accepts the failover (writes paused). @default min(10,
   * timeoutSeconds − 1)
   */
  failoverRetrySeconds?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
  /**
   * Step 0, the aim: the pause starts this long (plus three times the slowest Sentinel call the
   * aim saw, at most a period) before the first Sentinel's next INFO of the
   * replica it was steered to promote, so the promotion is in that INFO (see the script). 0 = not
   * aimed (and not steered): the failover is asked as soon as the replicas caught up, and waits 0-1 s
   * for that INFO. @default DEFAULT_SWITCHOVER_AIM_LEAD_MS
   */
  aimLeadMs?: number;
  /**
   * The Sentinels' INFO period (what sentinel-start.sh sets): the aim's next read comes no sooner
   * than this after the last. @default SENTINEL_INFO_PERIOD_MS
   */
  sentinelInfoPeriodMs?: number;
}

export const DEFAULT_SWITCHOVER_TIMEOUT_SECONDS = 30;
export const DEFAULT_SWITCHOVER_CATCH_UP_SECONDS = 5;
export const DEFAULT_SWITCHOVER_RETRY_SECONDS = 10;
/**
 * From the pause to the failover's REPLICAOF NO ONE: 0.22-0.29 s on idle real processes (the
 * catch-up, then 2-3 Sentinel ticks), 0.29-0.51 s on loaded real pods (kube:local, 5 switchovers);
 * the pause starts aimLeadMs before the Sentinel's earliest next read, so 500 leaves room for both
 * (the read itself goes out at the Sentinel's first tick after that, 0-0.1 s later).
 */
export const DEFAULT_SWITCHOVER_AIM_LEAD_MS = 500;

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
  const aimLead = o.aimLeadMs ?? DEFAULT_SWITCHOVER_AIM_LEAD_MS;
  if (!Number.isInteger(aimLead) || aimLead < 0 || aimLead > 800)
    throw new Error(`preStop: aimLeadMs must be a whole number of milliseconds from 0 to 800 (got ${aimLead})`);
  const infoPeriod = o.sentinelInfoPeriodMs ?? SENTINEL_INFO_PERIOD_MS;
  if (!Number.isInteger(infoPeriod) || infoPeriod < 100 || infoPeriod > 60_000)
    throw new Error(
      `preStop: sentinelInfoPeriodMs must be a whole number of milliseconds from 100 to 60000 (got ${infoPeriod})`,
    );
  if (!/^[A-Za-z0-9._-]+$/.test(o.masterName))
    throw new Error(`preStop: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  if (o.sentinels.length === 0) throw new Error("preStop: sentinels must name at least one Sentinel");
  for (const s of o.sentinels)
    if (!/^[^\s,:']+:\d+$/.test(s)) throw new Error(`preStop: sentinel '${s}' is not host:port`);
  return renderShellFile("replication-prestop.sh", {
    port: o.port ?? VALKEY_PORT,
    local_host: localHost(o.localHost),
    timeout_s: timeout,
    catch_up_s: catchUp,
    failover_retry_s: retry,
    master_name: o.masterName,
    sentinels: o.sentinels.join(" "),
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
    aim_lead_ms: aimLead,
    info_period_ms: infoPeriod,
  });
}
