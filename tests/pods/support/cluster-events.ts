/**
 * The cluster's own account of a drill, from the members' container logs (kubelet-timestamped): the server's lines
 * about failure marks, elections, role and address changes and its cluster state, and the pod scripts' heal,
 * rejoin and failback lines, merged across pods in time order relative to the fault. A drill row that lost
 * acknowledged writes says when and by which node; these lines say why (which replica was elected over which primary,
 * whether the primary was still reachable). Printed by the pods tests when a drill row is not ok, whose stack is
 * destroyed right after.
 */

/** The server's log messages (Valkey's cluster_legacy.c wording) and the scripts' prefixes worth a line each. */
const EVENT =
  /Cluster state changed|Address updated|possibly failing|as failing|FAIL message received|Clear FAIL state|election|Failover auth|[Mm]anual failover|Taking over the primary|Configuration change detected|Setting myself to primary|is now a replica of|Connecting to PRIMARY|Full resync from primary|Lost my last slot|configEpoch|^(heal|rejoin|failback|prestop): /;

/** kubelet's `timestamps=true` prefix, then the line; a server line is "pid:R dd Mon yyyy hh:mm:ss.mmm <level> text". */
const KUBELET_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (.*)$/;
const SERVER_PREFIX = /^\d+:[A-Z] \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.*#-] /;

export interface ClusterEvent {
  /** ms from the fault (kubelet's clock). */
  t: number;
  pod: string;
  text: string;
}

/**
 * The event lines of one pod's log at or after `fromMs` before the fault (negative: that long before it); lines
 * without a kubelet timestamp are skipped.
 */
export function clusterEvents(pod: string, log: string, faultAt: number, fromMs = -2000): ClusterEvent[] {
  const out: ClusterEvent[] = [];
  for (const line of log.split("\n")) {
    const m = KUBELET_LINE.exec(line);
    if (m === null) continue;
    const t = Date.parse(m[1] as string) - faultAt;
    if (Number.isNaN(t) || t < fromMs) continue;
    const text = (m[2] as string).replace(SERVER_PREFIX, "");
    if (EVENT.test(text)) out.push({ t, pod, text });
  }
  return out;
}

/** Every pod's events merged in time order, one "+12.345 s pod: text" line each, at most `limit` lines. */
export function clusterEventLines(logs: ReadonlyMap<string, string>, faultAt: number, limit = 250): string[] {
  const all = [...logs].flatMap(([pod, log]) => clusterEvents(pod, log, faultAt));
  all.sort((a, b) => a.t - b.t);
  const lines = all
    .slice(0, limit)
    .map((e) => `${e.t >= 0 ? "+" : ""}${(e.t / 1000).toFixed(3)} s ${e.pod}: ${e.text.slice(0, 220)}`);
  if (all.length > limit) lines.push(`(${all.length - limit} more)`);
  return lines;
}
