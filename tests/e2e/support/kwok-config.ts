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
 * JOB_POD_RELEASE_LABEL=true on a Job's pod, and with `freshPodIps` StatefulSet pods getting their
 * IP from POD_IP_ANNOTATION (freshIpPodReady).
 */
export function kwokStages(dir: string, storageClasses: readonly string[], holdJobPods: boolean, freshPodIps = false): string {
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
      if (freshPodIps && f === "pod-ready.yaml") text = freshIpPodReady(text);
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

/** The annotation a pod's IP is read from when the plane gives StatefulSet pods fresh IPs (pod-ips.ts writes it). */
export const POD_IP_ANNOTATION = "e2e.valkey-on-eks/pod-ip";
const STS_POD_LABEL = `'.metadata.labels["statefulset.kubernetes.io/pod-name"]'`;
const PODIPS_LINE = /^( *)\{\{ \$podIPs := PodIPsWith [^\n]*\}\}$/m;

/**
 * kwok's pod-ready stage split in two: other pods as before (kwok's IP pool), StatefulSet pods only
 * once they carry POD_IP_ANNOTATION, with that IP. kwok's pool hands a deleted pod's IP to the next
 * pod of the node (a freed IP is reused first), so a recreated member would come back on its old
 * address; a real CNI gives no such promise, and the drills need the new-address case.
 */
export function freshIpPodReady(podReady: string): string {
  const at = "    matchExpressions:\n";
  if (!podReady.includes(at) || !PODIPS_LINE.test(podReady))
    throw new Error("kwok's pod-ready stage no longer has the matchExpressions / PodIPsWith lines fresh pod IPs rewrite");
  const expr = (op: string, key = STS_POD_LABEL): string => `    - key: ${key}\n      operator: '${op}'\n`;
  const others = podReady.replace(at, `${at}${expr("DoesNotExist")}`);
  const sts = podReady
    .replace("name: pod-ready\n", "name: pod-ready-fresh-ip\n")
    .replace(at, `${at}${expr("Exists")}${expr("Exists", `'.metadata.annotations["${POD_IP_ANNOTATION}"]'`)}`)
    .replace(PODIPS_LINE, `$1{{ $podIPs := list (index .metadata.annotations "${POD_IP_ANNOTATION}") }}`);
  if (!sts.includes("name: pod-ready-fresh-ip\n")) throw new Error("kwok's pod-ready stage is no longer named pod-ready");
  return `${others.trim()}\n---\n${sts.trim()}`;
}
