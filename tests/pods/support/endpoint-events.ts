/**
 * What the write endpoint and the Sentinels said about their members, printed when an `up` on real
 * pods fails: HAProxy writes every server state change to stderr ("Server write-m/m is DOWN, reason:
 * Layer7 timeout, check duration: 2001ms ..."), the Sentinels their `+sdown`, `+odown`, `+switch-master`
 * and `+tilt` events. A benchmark Job that read "Server closed the connection" through the write endpoint
 * then names why the endpoint had no member: a check that timed out, a failover, or a Sentinel in TILT.
 * Read-only; never throws (a failure to read is part of the text).
 */
import type { Api } from "../../../apps/kube-local/api.js";

const COMPONENTS = ["haproxy", "sentinel"] as const;
/** The lines that say a state changed (HAProxy's server/backend lines, Sentinel's events). */
export const STATE_CHANGE =
  /Server \S+ is |has no server available|[+-](sdown|odown|switch-master|failover-|tilt|try-failover)/;
const LINES_PER_POD = 40;

interface PodList {
  items: Array<{ metadata: { name: string; labels?: Record<string, string> } }>;
}

/** The last state changes each HAProxy and Sentinel pod of `namespace` logged, with the kubelet's timestamps. */
export async function endpointEvents(api: Api, namespace: string): Promise<string> {
  try {
    const pods = (await api<PodList>("GET", `/api/v1/namespaces/${namespace}/pods`)).body.items;
    const out = [`state changes the write endpoint and the Sentinels logged (namespace ${namespace}):`];
    for (const component of COMPONENTS) {
      for (const pod of pods.filter((p) => p.metadata.labels?.["app.kubernetes.io/component"] === component)) {
        const name = pod.metadata.name;
        const { status, body } = await api<unknown>(
          "GET",
          `/api/v1/namespaces/${namespace}/pods/${name}/log?container=${component}&timestamps=true&tailLines=5000`,
        );
        const text = typeof body === "string" ? body : JSON.stringify(body);
        const lines = status === 200 ? text.split("\n").filter((l) => STATE_CHANGE.test(l)) : [`not read: ${status}`];
        out.push(
          `  ${name}: ${lines.length === 0 ? "none" : ""}`,
          ...lines.slice(-LINES_PER_POD).map((l) => `    ${l}`),
        );
      }
    }
    return out.join("\n");
  } catch (err) {
    return `state changes of namespace ${namespace} not read: ${(err as Error).message}`;
  }
}
