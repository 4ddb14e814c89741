/**
 * Every container log (current and previous, kubelet-timestamped) of a namespace's pods: saved for a failed `up` or a
 * failed drill row (the stack is destroyed right after), and read for the cluster's account of a failed drill
 * (cluster-events.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import type { Api } from "../../../apps/kube-local/api.js";
import { VALKEY_CONTAINER } from "../../../components/steps/failure-drill/faults.js";
import { PRESTOP_LOG_FILE } from "../../../pod/paths.js";
import { clusterEventLines } from "./cluster-events.js";
import { readPreStopLogs } from "./prestop-logs.js";

/** "pod.container" (".previous" for the container's last run) → its log, for every pod of `ns`. */
export async function readPodLogs(api: Api, ns: string): Promise<Map<string, string>> {
  const pods = await api<{
    items: Array<{ metadata: { name: string }; spec: { containers: Array<{ name: string }> } }>;
  }>("GET", `/api/v1/namespaces/${ns}/pods`);
  const logs = new Map<string, string>();
  for (const p of pods.body.items ?? [])
    for (const c of p.spec.containers)
      for (const previous of [false, true]) {
        const path = `/api/v1/namespaces/${ns}/pods/${p.metadata.name}/log?container=${c.name}&timestamps=true${previous ? "&previous=true" : ""}`;
        const r = await api<string>("GET", path).catch(() => undefined);
        if (r?.status === 200) logs.set(`${p.metadata.name}.${c.name}${previous ? ".previous" : ""}`, String(r.body));
      }
  return logs;
}

/**
 * Every container log of `ns` into `dir` (emptied first: an earlier run's pods would mix in), and each member's preStop
 * log from its data volume (PRESTOP_LOG_FILE: the container's log goes with an evicted pod). The logs, as read.
 */
export async function savePodLogs(
  api: Api,
  kubeconfigPath: string,
  ns: string,
  dir: string,
): Promise<Map<string, string>> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const logs = await readPodLogs(api, ns);
  for (const [name, text] of logs) writeFileSync(`${dir}/${name}.log`, text);
  for (const [pod, text] of await readPreStopLogs(api, kubeconfigPath, ns))
    writeFileSync(`${dir}/${pod}.${PRESTOP_LOG_FILE}`, text);
  console.log(`[pods] ${ns}: the pods' logs are in ${dir}`);
  return logs;
}

/**
 * For each drill row that is not `ok`: the members' logs saved to `dir`, and the cluster's own account of the drill
 * printed (elections, failure marks, role and address changes, the scripts' lines; cluster-events.ts), so that a
 * failed row in a CI log says why and not only what. The logs are those of the pods alive now: after `all`, the
 * members' new containers (the fault deleted the old pods).
 */
export async function explainFailedDrills(
  api: Api,
  kubeconfigPath: string,
  ns: string,
  rows: ReadonlyArray<{ fault: string; ok: boolean; faultAt?: string; failures?: string[] }>,
  dir: string,
): Promise<void> {
  const failed = rows.filter((r) => !r.ok);
  if (failed.length === 0) return;
  const logs = await savePodLogs(api, kubeconfigPath, ns, dir).catch((why: unknown) => {
    console.log(`[pods] ${ns}: the pods' logs could not be read: ${String(why)}`);
    return new Map<string, string>();
  });
  const members = new Map([...logs].filter(([name]) => name.split(".")[1] === VALKEY_CONTAINER));
  for (const r of failed) {
    const faultAt = r.faultAt === undefined ? Number.NaN : Date.parse(r.faultAt);
    const account = Number.isNaN(faultAt)
      ? ["(the row has no faultAt)"]
      : clusterEventLines(
          new Map([...members].map(([name, text]) => [name.replace(`.${VALKEY_CONTAINER}`, ""), text])),
          faultAt,
        );
    console.log(
      `[pods] ${ns}: drill ${r.fault} not ok (${(r.failures ?? []).join("; ")}); the members' own account, from 2 s before the fault:\n${account.join("\n")}`,
    );
  }
}
