/**
 * kwok's pods run no process. This stand-in makes the failure drill's load Job pods real (the
 * pods labelled `valkey-on-eks/drill-load=true`; the contract is components/steps/failure-drill/
 * load-job.ts): when such a pod runs, its ConfigMap volumes are written into a temporary
 * directory, and the `drill-load` container's command is run here with this process's own Node
 * standing in for the image's `node`, every mount path mapped into that directory, and the env of
 * the pod spec (secretKeyRef read from the Secret, Service hosts replaced by a Ready pod's IP: see
 * job-pods.ts). Its stdout and stderr become the container's log served through the API server
 * (`pods/log`), as kubelet would merge them; then kwok completes the pod.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";
import { standInForJobPods, type JobPods } from "./job-pods.js";

export const DRILL_LOAD_SELECTOR = "valkey-on-eks/drill-load=true";
export const DRILL_LOAD_CONTAINER = "drill-load";

/** Writes the ConfigMap volumes `container` mounts under `root`; returns mount path → directory. */
async function materializeConfigMaps(core: k8s.CoreV1Api, pod: k8s.V1Pod, container: k8s.V1Container, root: string): Promise<Map<string, string>> {
  const namespace = pod.metadata?.namespace ?? "default";
  const mounts = new Map<string, string>();
  for (const m of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find((v) => v.name === m.name);
    // The API access token the ServiceAccount admission adds: the load never calls the API.
    if (volume?.projected?.sources?.some((x) => x.serviceAccountToken !== undefined)) continue;
    if (volume?.configMap === undefined) throw new Error(`${pod.metadata?.name}: volume ${m.name} is not a ConfigMap (this stand-in mounts ConfigMaps only)`);
    const cm = await core.readNamespacedConfigMap({ name: volume.configMap.name ?? "", namespace });
    const dir = join(root, m.name);
    const items = volume.configMap.items ?? Object.keys(cm.data ?? {}).map((key) => ({ key, path: key }));
    for (const item of items) {
      const data = cm.data?.[item.key];
      if (data === undefined) throw new Error(`ConfigMap ${namespace}/${volume.configMap.name} has no key ${item.key}`);
      const file = join(dir, item.path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, data);
    }
    mounts.set(m.mountPath, dir);
  }
  return mounts;
}

/** `part` with a leading mount path replaced by its directory (`/drill/load.mjs` → `<dir>/load.mjs`). */
export function mapMountPath(part: string, mounts: ReadonlyMap<string, string>): string {
  for (const [path, dir] of mounts) {
    const base = path.replace(/\/+$/, "");
    if (part === base) return dir;
    if (part.startsWith(`${base}/`)) return `${dir}${part.slice(base.length)}`;
  }
  return part;
}

/** Runs the drill-load Job pods of `namespace` as they start, until stopped (the plane must hold Job pods). */
export function standInForDrillLoadJobs(core: k8s.CoreV1Api, plane: ControlPlane, namespace: string): JobPods {
  const roots = new Set<string>();
  const pods = standInForJobPods(core, plane, namespace, {
    labelSelector: DRILL_LOAD_SELECTOR,
    container: DRILL_LOAD_CONTAINER,
    logFile: plane.drillLoadLogFile,
    prepare: async (pod, container, env) => {
      const root = mkdtempSync(join(tmpdir(), "vbench-e2e-drill-load-"));
      roots.add(root);
      const mounts = await materializeConfigMaps(core, pod, container, root);
      const [bin = "", ...args] = container.command ?? [];
      return {
        command: [bin === "node" ? process.execPath : bin, ...args.map((a) => mapMountPath(a, mounts))],
        env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: root, HOSTNAME: pod.metadata?.name ?? "", ...env },
        cwd: root,
        cleanup: () => {
          roots.delete(root);
          rmSync(root, { recursive: true, force: true });
        },
      };
    },
  });
  return {
    logs: pods.logs,
    errors: pods.errors,
    stop: async () => {
      await pods.stop();
      for (const r of roots) rmSync(r, { recursive: true, force: true });
    },
  };
}
