/**
 * What the e2e control plane gives kwok in its `--config`: kwok's own stage YAMLs (node
 * initialise + lease heartbeat, pod fast lifecycle, volume provisioning), optionally with Job
 * pods held until released and StatefulSet pods given fresh IPs, and the static ClusterLogs that
 * serve the Job containers' logs.
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
        if (!text.includes(jobOwned))
          throw new Error(`kwok's pod-complete stage no longer matches Job-owned pods as expected (${join(dir, f)})`);
        text = text.replace(jobOwned, held);
      }
      return text.trim();
    })
    .join("\n---\n");
}

/**
 * kwok serves the log of every container named like a key of `files` from that file (one static
 * ClusterLogs per container name: one pod per container name at a time).
 */
export function kwokContainerLogs(files: Readonly<Record<string, string>>): string {
  return Object.entries(files)
    .map(([container, file]) =>
      [
        "apiVersion: kwok.x-k8s.io/v1alpha1",
        "kind: ClusterLogs",
        "metadata:",
        `  name: ${container}-container-logs`,
        "spec:",
        "  logs:",
        `  - containers: [${JSON.stringify(container)}]`,
        `    logsFile: ${JSON.stringify(file)}`,
      ].join("\n"),
    )
    .join("\n---\n");
}
