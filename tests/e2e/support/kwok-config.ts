/**
 * What the e2e control plane gives kwok in its `--config`: kwok's own stage YAMLs (node
 * initialise + lease heartbeat, pod fast lifecycle, volume provisioning), optionally with Job
 * pods held until released, and the static ClusterLogs that serves benchmark container logs.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The default StorageClass; kwok's volume stages provision and bind its PVCs. */
export const KWOK_STORAGE_CLASS = "kwok-volume";

/** The pod label that lets kwok complete a held Job pod (see ControlPlaneOptions.holdJobPods). */
export const JOB_POD_RELEASE_LABEL = "kwokrelease";

/**
 * kwok's own stage YAMLs from `dir`, with the volume stages' StorageClass match widened to
 * `storageClasses`, and with `holdJobPods` kwok's pod-complete stage waiting for
 * JOB_POD_RELEASE_LABEL=true on a Job's pod.
 */
export function kwokStages(dir: string, storageClasses: readonly string[], holdJobPods: boolean): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort();
  const list = `[${storageClasses.map((s) => `'${s}'`).join(", ")}]`;
  const jobOwned = "      - 'Job'\n";
  const held = `${jobOwned}    - key: '.metadata.labels.${JOB_POD_RELEASE_LABEL}'\n      operator: 'In'\n      values:\n      - 'true'\n`;
  return files
    .map((f) => {
      let text = readFileSync(join(dir, f), "utf8").replaceAll(
        `self.spec.storageClassName == '${KWOK_STORAGE_CLASS}'`,
        `self.spec.storageClassName in ${list}`,
      );
      if (holdJobPods && f === "pod-complete.yaml") {
        if (!text.includes(jobOwned)) throw new Error(`kwok's pod-complete stage no longer matches Job-owned pods as expected (${join(dir, f)})`);
        text = text.replace(jobOwned, held);
      }
      return text.trim();
    })
    .join("\n---\n");
}

/** kwok serves every `benchmark` container's log from `logFile` (a static ClusterLogs). */
export function kwokBenchmarkLogs(logFile: string): string {
  return [
    "apiVersion: kwok.x-k8s.io/v1alpha1",
    "kind: ClusterLogs",
    "metadata:",
    "  name: benchmark-container-logs",
    "spec:",
    "  logs:",
    "  - containers: ['benchmark']",
    `    logsFile: ${JSON.stringify(logFile)}`,
  ].join("\n");
}
