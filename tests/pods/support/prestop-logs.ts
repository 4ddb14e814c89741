/**
 * Each member's preStop log from its data volume (PRESTOP_LOG_FILE: the container's log goes with an
 * evicted pod, the volume stays), read through the drills' own exec. The exec keeps the last 500
 * characters of stderr, so the file comes in pieces of 400 bytes.
 */
import { readFileSync } from "node:fs";
import type { Api } from "../../../apps/kube-local/api.js";
import { formatFailureKinds } from "../../../core/drill/drill-table.js";
import type { FailureKind } from "../../../core/drill/ledger.js";
import { kubernetesDrillApi } from "../../../components/steps/failure-drill/kube-api.js";
import { VALKEY_CONTAINER } from "../../../components/steps/failure-drill/faults.js";
import { SENTINEL_CONTAINER } from "../../../components/valkey/sentinel-manifests.js";
import { DATA_DIR, PRESTOP_LOG_FILE } from "../../../pod/paths.js";

/** pod name → its preStop log, for the namespace's pods (those without one, or without a Valkey container, left out). */
export async function readPreStopLogs(api: Api, kubeconfigPath: string, ns: string): Promise<Map<string, string>> {
  const pods = await api<{
    items: Array<{ metadata: { name: string }; spec: { containers: Array<{ name: string }> } }>;
  }>("GET", `/api/v1/namespaces/${ns}/pods`);
  const exec = await kubernetesDrillApi(readFileSync(kubeconfigPath, "utf8"));
  const file = `${DATA_DIR}/${PRESTOP_LOG_FILE}`;
  const logs = new Map<string, string>();
  for (const { metadata, spec } of pods.body.items ?? []) {
    if (!spec.containers.some((c) => c.name === VALKEY_CONTAINER)) continue;
    let text = "";
    for (let at = 1; ; at += 400) {
      const r = await exec
        .exec(ns, metadata.name, VALKEY_CONTAINER, [
          "sh",
          "-c",
          `[ ! -f ${file} ] || tail -c +${at} ${file} | head -c 400 >&2`,
        ])
        .catch((why: unknown) => ({ exitCode: -1, stderr: `(not read: ${String(why)})` }));
      text += r.stderr;
      if (r.exitCode !== 0 || r.stderr.length < 400) break;
    }
    if (text !== "") logs.set(metadata.name, text);
  }
  return logs;
}

/** A drill row as far as explainSlowSwitchover reads it. */
interface SwitchoverRow {
  fault: string;
  writeOutageMs: number;
  failoverSteps?: unknown;
  streams?: ReadonlyArray<{ stream: string; failureKinds?: readonly FailureKind[] }>;
}

/**
 * When a stack's switchover row stopped writes longer than `slowMs`: prints its failover steps, why
 * its writes failed, and every member's preStop log, so the CI log keeps what the destroyed stack
 * knew (a 16.6 s replication switchover on CI pods, 2026-11-29, left nothing to read), and the
 * Sentinels' own logs (an 11.9 s one the same day: the asked Sentinel answered OK and never acted;
 * in TILT or not, only its log could say).
 */
export async function explainSlowSwitchover(
  api: Api,
  kubeconfigPath: string,
  ns: string,
  rows: readonly SwitchoverRow[],
  slowMs = 3000,
): Promise<void> {
  const row = rows.find((r) => r.fault === "switchover");
  if (row === undefined || row.writeOutageMs <= slowMs) return;
  const why = formatFailureKinds([...(row.streams ?? [])]);
  const logs = await readPreStopLogs(api, kubeconfigPath, ns).catch(
    (e: unknown) => new Map([["(none)", `not read: ${String(e)}`]]),
  );
  const sentinels = await readSentinelLogs(api, ns).catch(
    (e: unknown) => new Map([["(none)", `not read: ${String(e)}`]]),
  );
  console.log(
    `[pods] ${ns}: switchover stopped writes ${row.writeOutageMs} ms (> ${slowMs}); steps ${JSON.stringify(row.failoverSteps ?? null)}; why writes failed: ${why || "(not in the row)"}\n${[...logs].map(([pod, text]) => `--- ${pod} ${PRESTOP_LOG_FILE}\n${text}`).join("\n")}\n${[...sentinels].map(([pod, text]) => `--- ${pod} Sentinel log (last ${SENTINEL_LOG_LINES} lines: +tilt, elections)\n${text}`).join("\n")}`,
  );
}

const SENTINEL_LOG_LINES = 150;

/** pod name → the last lines of its Sentinel container's log (a Sentinel's +tilt/-tilt are there, not in the row when entered before the drill). */
async function readSentinelLogs(api: Api, ns: string): Promise<Map<string, string>> {
  const pods = await api<{
    items: Array<{ metadata: { name: string }; spec: { containers: Array<{ name: string }> } }>;
  }>("GET", `/api/v1/namespaces/${ns}/pods`);
  const logs = new Map<string, string>();
  for (const { metadata, spec } of pods.body.items ?? []) {
    if (!spec.containers.some((c) => c.name === SENTINEL_CONTAINER)) continue;
    const r = await api<unknown>(
      "GET",
      `/api/v1/namespaces/${ns}/pods/${metadata.name}/log?container=${SENTINEL_CONTAINER}&tailLines=${SENTINEL_LOG_LINES}`,
    ).catch((why: unknown) => ({ body: `(not read: ${String(why)})` }));
    logs.set(metadata.name, typeof r.body === "string" ? r.body : JSON.stringify(r.body));
  }
  return logs;
}
