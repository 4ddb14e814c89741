/**
 * The cluster member's lost-volume rejoin (a POSIX sh script in the ConfigMap).
 *
 * Why: a member whose data volume was lost (a force-deleted PVC, a wiped disk) starts with an
 * empty nodes.conf and a NEW node id. The others still list its OLD id (same announced hostname),
 * nobody meets the new one, and the bootstrap refuses a half-formed cluster: it never rejoins.
 *
 * Two entry points, both keyed on the announced hostname ($VALKEY_ANNOUNCE_HOST, the pod's
 * stable DNS name, which CLUSTER NODES shows after the address: `ip:port@bus,hostname`):
 *
 * - `rejoin.sh gate` runs in the foreground from start.sh, only when `<dataDir>/nodes.conf` is
 *   missing, BEFORE valkey-server starts. While some peer still lists a node with this hostname
 *   as a primary owning slots, it waits (up to the gate deadline): an empty server on the old
 *   address would otherwise be taken for the old primary by its replica, which would full-sync
 *   from it and empty itself. It returns once a replica took the slots over (the old entry has
 *   no slots) or no peer lists this hostname (a first start). When the old entry is marked
 *   `fail`, still owns slots and has no replica, those slots are LOST: it says so and starts
 *   anyway as a slot-less node, never claiming them.
 * - `rejoin.sh <server-pid>` runs in the background. A node that already knows peers, or whose
 *   hostname no peer lists, is left alone (the bootstrap introduces new members). Otherwise it
 *   finds the old entry (same hostname, another id), waits until it is flagged `fail` and owns
 *   no slots, checks each peer's identity (CLUSTER MYID at its address equals its id in the
 *   view) and sends `CLUSTER FORGET <old id>` to EVERY peer (FORGET bans the id for 60 s per
 *   node; a node that still knows it would gossip it back), then `CLUSTER MEET`s one peer and
 *   `CLUSTER REPLICATE`s the primary with the fewest replicas as that peer counts them (its own view
 *   right after the MEET lacks the replicas it has not heard of by gossip yet), preferring one whose
 *   availability-zone differs from its own (replicas in another zone than their primary; no
 *   primary moves, so no zone gains primaries).
 *
 * Peers: every address of the headless Service (`getent ahosts` of the announced name without
 * its first label) on this pod's port; `$VALKEY_HEAL_HOSTS_FILE` (lines `ip name [port]`) replaces
 * DNS in the local tests. Every valkey-cli call is bounded (sh-cli.ts); the password is only in
 * the environment.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { renderShellFile } from "./shell-file.js";

export interface ClusterRejoinScriptOptions {
  /** This node's client port (and the peers', in a pod). @default VALKEY_PORT */
  port?: number;
  /** @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Seconds between rounds. @default 2 */
  intervalSeconds?: number;
  /** Background mode gives up after this many seconds. @default 600 */
  deadlineSeconds?: number;
  /** The gate lets the server start after this many seconds whatever it sees. @default 300 */
  gateDeadlineSeconds?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new Error(`cluster rejoin: ${name} must be a whole number >= 1, got ${v}`);
  return v;
}

export function renderClusterRejoinScript(o: ClusterRejoinScriptOptions = {}): string {
  const port = positiveInt("port", o.port ?? VALKEY_PORT);
  const interval = positiveInt("intervalSeconds", o.intervalSeconds ?? 2);
  const deadline = positiveInt("deadlineSeconds", o.deadlineSeconds ?? 600);
  const gateDeadline = positiveInt("gateDeadlineSeconds", o.gateDeadlineSeconds ?? 300);
  return renderShellFile("cluster-rejoin.sh", {
    port,
    local_host: localHost(o.localHost),
    interval,
    gate_deadline: gateDeadline,
    run_deadline: deadline,
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
  });
}
