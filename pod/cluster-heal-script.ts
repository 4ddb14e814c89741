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
 * 2. reads CLUSTER NODES and CLUSTER INFO in one valkey-cli call (the state after a marker the
 *    server echoes); a node that knows no peer is a new member (the bootstrap introduces it):
 *    nothing to do;
 * 3. for every peer, resolves the peer's announced hostname (its stable pod DNS name, stored in
 *    nodes.conf; the headless Service publishes not-ready addresses, so it resolves while pods
 *    start) with `getent hosts`; when the name resolves to an address other than the one on
 *    record, asks the server there for CLUSTER MYID and, only if that is the peer's node ID, sends
 *    `CLUSTER MEET <new ip> <port> <bus port>` (a MEET to a known node makes Valkey update that
 *    node's address when the handshake completes); a round's MEETs go to the local server in one
 *    valkey-cli call (one call per MEET was one more process per moved peer, member and round).
 *    Every round MEETs every moved peer again until its link is up: a version that skipped a peer met
 *    in the last 5 rounds (a handshake may outlast a round) healed a full restart on real pods in
 *    52 s, and a shard lost 2 acknowledged writes taken by its restarted primary meanwhile; met every
 *    round, one call per MEET: 9.7-14.0 s, 0 lost in 5 of 5 runs; this script: 9.9-13.6 s, 0 lost in
 *    5 of 5 (the cluster `all` drill; docs/measurements.md, 2026-11-30);
 * 4. stops once `cluster_state:ok`, every peer's link is up and every peer has answered CLUSTER
 *    MYID with its node ID at the address on record; or when the server is gone, or after the
 *    deadline. It never forgets nodes or touches slots. A peer that answered is not asked again
 *    at the same address while its link stays up (asked before its MEET, it needs no second ask
 *    to prove the link): every member asking every peer every round made a full restart of N
 *    members N² valkey-cli processes a round on one host (200 members: 520 s). A round's asks go
 *    in one valkey-cli process (lib-ask-myids.sh: `connect ip port` per peer, the local server
 *    echoing a marker after each answer so an answer is paired with its own ask,
 *    myid-answers.awk; a peer that hangs is asked after the others from then on); one process
 *    per ask was still N² processes in all (200 members on one host: 39,800, at about 7 ms of
 *    CPU each against 0.3 ms per ask in one process). A proof is dropped by rebuilding the set
 *    line by line (lib-proven.sh): dash's `${var#*word}` tries every prefix, 0.5 s of CPU a drop
 *    at 200 peers, a drop per down peer and round.
 * 5. releases the hold on automatic failover that start.sh puts on a restarted member
 *    (start-script.ts holdFailover: `cluster-replica-no-failover yes`) at every exit, or earlier
 *    when the primary it reached since its start is gone again. While held, a replica whose
 *    primary the cluster flags `fail` while its link to it is up takes over by hand, without loss:
 *    the primary's writes paused (CLIENT PAUSE 3000 WRITE), its offset reached, CLUSTER FAILOVER
 *    FORCE. Unheld, Valkey elects such a replica over the live primary (a primary with slots stays
 *    flagged for 2 x cluster-node-timeout after it is reachable again) and the writes the primary
 *    acknowledged meanwhile are lost: 2 in a CI pods run, 4 and 6 reproduced on processes, 0 with
 *    the hold (docs/measurements.md, 2026-12-03).
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
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { renderShellFile } from "./shell-file.js";

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
  return renderShellFile("cluster-heal.sh", {
    port,
    local_host: localHost(o.localHost),
    interval,
    deadline,
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
  });
}
