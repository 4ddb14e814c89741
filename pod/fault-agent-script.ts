/**
 * The fault agent of a deployed `freeze` or `partition` drill (components/steps/failure-drill/
 * fault-agent.ts): a POSIX sh script run by a privileged pod that shares the host's PID namespace
 * on the victim's node. The Kubernetes API can neither stop a container's PID 1 nor cut traffic
 * the release's NetworkPolicies admit; from the host's PID namespace both are plain:
 * - it finds the victim's `valkey-server` among the host's processes by the pod's UID in its
 *   cgroup path (`pod<uid>` with the cgroupfs driver, `pod<uid_with_underscores>` with systemd),
 *   skipping the server's own forks (a BGSAVE child's parent is a valkey-server);
 * - freeze: SIGSTOP to that process (a signal from an ancestor PID namespace reaches a
 *   namespace's init), SIGCONT after HOLD_S, as the local drill stops its process;
 * - partition: in the victim's network namespace (nsenter into it, then chroot into the node's
 *   root, mounted at HOST_ROOT, for the node's own `iptables`), DROP every packet from and to each of PEERS (the
 *   release's other members and its Sentinels), both directions, for HOLD_S, then delete exactly
 *   those rules. Clients (the load pod, HAProxy) still reach the victim, as in the local drill.
 * It prints `fault-agent: injected <epoch ms> …` once the fault is in (the drill's fault time) and
 * `fault-agent: restored <epoch ms>` once it is undone; SIGTERM (the pod deleted) undoes it first.
 * Env: FAULT (freeze|partition), TARGET_POD_UID, HOLD_S, PEERS (space-separated IPs, partition).
 */

import { renderShellFile } from "./shell-file.js";

/** The line prefixes the drill reads from the agent's log. */
export const AGENT_INJECTED = "fault-agent: injected";
export const AGENT_RESTORED = "fault-agent: restored";
/** Where the agent pod mounts the node's root (hostPath `/`): partition runs the node's iptables from there. */
export const HOST_ROOT = "/host";

/** The agent's script (pod/scripts/fault-agent.sh), run as `sh -c` in its pod. */
export function faultAgentScript(): string {
  return renderShellFile("fault-agent.sh", { host_root: HOST_ROOT });
}
