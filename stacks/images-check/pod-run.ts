/**
 * One container of a pod the program renders (a Job's pod template), as a container engine runs
 * it: its command, arguments and environment, the pod's user, a read-only root, its ConfigMap
 * volumes as read-only files and its emptyDirs as tmpfs. A Secret's variable is passed by name
 * (engine.ts: its value comes from this process's environment, never argv). Anything the engine
 * cannot give the container the way the kubelet does is an error naming it, never skipped.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSpec } from "./engine.js";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: { runAsUser?: number; readOnlyRootFilesystem?: boolean };
}
export interface RenderedPod {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: { name: string; configMap?: { name: string }; emptyDir?: object }[];
  securityContext?: { runAsUser?: number; runAsGroup?: number };
}

export interface PodRunInput {
  pod: RenderedPod;
  /** The ConfigMaps the pod's volumes name: name → key → content. */
  configMaps: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Where ConfigMap files are written for the mount. */
  dir: string;
  /** The container whose network namespace this one joins (the pod's localhost). */
  joinNetworkOf: string;
}

function envOf(c: Container): { env: Record<string, string>; passEnv: string[] } {
  const env: Record<string, string> = {};
  const passEnv: string[] = [];
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef !== undefined) passEnv.push(e.name);
    else throw new Error(`container ${c.name}: env ${e.name} is neither a value nor a Secret key`);
  }
  return { env, passEnv };
}

function mountsOf(c: Container, i: PodRunInput): Pick<RunSpec, "mounts" | "tmpfs"> {
  const mounts: { host: string; path: string }[] = [];
  const tmpfs: string[] = [];
  for (const m of c.volumeMounts ?? []) {
    const v = (i.pod.volumes ?? []).find((x) => x.name === m.name);
    if (v?.emptyDir !== undefined) tmpfs.push(m.mountPath);
    else if (v?.configMap !== undefined) {
      const data = i.configMaps[v.configMap.name];
      if (data === undefined) throw new Error(`container ${c.name}: ConfigMap ${v.configMap.name} was not given`);
      const host = join(i.dir, v.name);
      mkdirSync(host, { recursive: true });
      for (const [key, content] of Object.entries(data)) writeFileSync(join(host, key), content, { mode: 0o644 });
      mounts.push({ host, path: m.mountPath });
    } else throw new Error(`container ${c.name}: volume ${m.name} is neither an emptyDir nor a ConfigMap`);
  }
  return { mounts, tmpfs };
}

/** The engine's run of the pod's only container (a Job without init containers). */
export function podRunSpec(i: PodRunInput): RunSpec {
  const [c, ...more] = i.pod.containers ?? [];
  if (c === undefined || more.length > 0 || (i.pod.initContainers ?? []).length > 0)
    throw new Error("the images check runs pods of exactly one container and no init container");
  if (c.image === undefined) throw new Error(`container ${c.name} has no image`);
  const [entrypoint, ...rest] = [...(c.command ?? []), ...(c.args ?? [])];
  if (entrypoint === undefined) throw new Error(`container ${c.name} has no command`);
  const uid = c.securityContext?.runAsUser ?? i.pod.securityContext?.runAsUser;
  const gid = i.pod.securityContext?.runAsGroup ?? uid;
  return {
    image: c.image,
    entrypoint,
    args: rest,
    ...envOf(c),
    ...mountsOf(c, i),
    ...(uid === undefined ? {} : { user: `${uid}:${gid}` }),
    readOnly: c.securityContext?.readOnlyRootFilesystem === true,
    joinNetworkOf: i.joinNetworkOf,
  };
}
