/**
 * The Job-pod stand-in (benchmark-pods.ts uses it; the drill load runs as a real Job in tests/pods): kwok's pods run no
 * process, so when a Job's pod runs (kwok marked it Running) one container's command is run here,
 * with the container's env read back from the API server (secretKeyRef resolved from the Secret),
 * and its stdout and stderr are written, as they come and in the CRI log format, to the file kwok
 * serves that container's log from (the plane's ClusterLogs), so `pods/log` through the API server
 * returns them as a kubelet would. Then the pod is labelled with the plane's release label, kwok's
 * pod-complete stage moves it to Succeeded, and the Job controller completes the Job. The plane
 * must hold Job pods (`holdJobPods`).
 *
 * What stands in for cluster DNS and kube-proxy: every `<service>.<namespace>.svc.cluster.local`
 * host in the command and the env is replaced by the IP of the first Ready pod the Service
 * selects, at the pod's start.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { pollInBackground } from "../../support/background-poll.js";
import { JOB_POD_RELEASE_LABEL, type ControlPlane } from "./control-plane.js";

export interface JobPods {
  /** Pod name → what its container wrote to stdout. */
  readonly logs: Map<string, string>;
  /** Failures (a command exiting non-zero, an unreadable Secret), reported by the test. */
  readonly errors: string[];
  stop(): Promise<void>;
}

/** `text` as a CRI container log file (what kubelet and kwok's log server read). */
export function criLog(stdout: string, stderr: string, at = new Date()): string {
  const lines = (stream: string, text: string): string[] =>
    text === ""
      ? []
      : text
          .replace(/\n$/, "")
          .split("\n")
          .map((l) => `${at.toISOString()} ${stream} F ${l}`);
  return [...lines("stdout", stdout), ...lines("stderr", stderr)].map((l) => `${l}\n`).join("");
}

async function serviceIp(core: k8s.CoreV1Api, name: string, namespace: string): Promise<string | undefined> {
  const svc = await core.readNamespacedService({ name, namespace });
  const selector = Object.entries(svc.spec?.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
  const ready = pods.filter(
    (p) => p.status?.podIP !== undefined && p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  ready.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  return ready[0]?.status?.podIP;
}

const SERVICE_HOST = /\b([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local\b/g;

/** `texts` with every Service host replaced by a Ready pod's IP (a host no Ready pod backs is an error). */
export async function resolveServiceHosts(core: k8s.CoreV1Api, texts: readonly string[]): Promise<string[]> {
  const ips = new Map<string, string>();
  for (const t of texts) {
    for (const [host, name = "", namespace = ""] of t.matchAll(SERVICE_HOST)) {
      if (ips.has(host)) continue;
      const ip = await serviceIp(core, name, namespace);
      if (ip === undefined) throw new Error(`no Ready pod behind Service ${namespace}/${name} (host ${host})`);
      ips.set(host, ip);
    }
  }
  return texts.map((t) => t.replace(SERVICE_HOST, (host) => ips.get(host) ?? host));
}

/** The container's env as the kubelet would give it: values, and secretKeyRef read from the Secret. */
export async function containerEnv(
  core: k8s.CoreV1Api,
  namespace: string,
  c: k8s.V1Container,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref !== undefined) {
      const secret = await core.readNamespacedSecret({ name: ref.name ?? "", namespace });
      const data = secret.data?.[ref.key];
      if (data === undefined) throw new Error(`Secret ${namespace}/${ref.name} has no key ${ref.key}`);
      env[e.name] = Buffer.from(data, "base64").toString("utf8");
    }
  }
  return env;
}

/** Runs `command`, appending its output to `logFile` as CRI log lines as it comes; resolves with all of it. */
export function runToCriLog(
  command: readonly string[],
  env: Record<string, string>,
  logFile: string,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [bin = "", ...args] = command;
    const child = spawn(bin, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out = { stdout: "", stderr: "" };
    for (const stream of ["stdout", "stderr"] as const) {
      let partial = "";
      child[stream].setEncoding("utf8").on("data", (d: string) => {
        out[stream] += d;
        const lines = (partial + d).split("\n");
        partial = lines.pop() ?? "";
        if (lines.length > 0)
          appendFileSync(
            logFile,
            criLog(
              stream === "stdout" ? `${lines.join("\n")}\n` : "",
              stream === "stderr" ? `${lines.join("\n")}\n` : "",
            ),
          );
      });
      child[stream].on("end", () => {
        if (partial !== "")
          appendFileSync(logFile, criLog(stream === "stdout" ? partial : "", stream === "stderr" ? partial : ""));
      });
    }
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, ...out }));
  });
}

export interface JobContainerRun {
  command: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Called once the command has exited. */
  cleanup?: () => void;
}

export interface JobPodOptions {
  /** Which Job pods (a label selector; `job-name` for all). */
  labelSelector: string;
  /** The container to run; its log is served from `logFile` (one pod at a time per file). */
  container: string;
  logFile: string;
  /** How this stand-in runs the container (its env and Service hosts already resolved). */
  prepare: (
    pod: k8s.V1Pod,
    container: k8s.V1Container,
    env: Record<string, string>,
  ) => JobContainerRun | Promise<JobContainerRun>;
}

/** Runs the matching Job pods of `namespace` one at a time as they start, until stopped. */
export function standInForJobPods(
  core: k8s.CoreV1Api,
  plane: ControlPlane,
  namespace: string,
  o: JobPodOptions,
): JobPods {
  const logs = new Map<string, string>();
  const errors: string[] = [];
  const handled = new Set<string>();
  mkdirSync(dirname(o.logFile), { recursive: true });

  const runPod = async (pod: k8s.V1Pod): Promise<void> => {
    const name = pod.metadata?.name ?? "?";
    const container = pod.spec?.containers.find((c) => c.name === o.container);
    if (container === undefined) throw new Error(`${name} has no ${o.container} container`);
    const rawEnv = await containerEnv(core, namespace, container);
    const keys = Object.keys(rawEnv);
    const command = [...(container.command ?? []), ...(container.args ?? [])];
    const resolved = await resolveServiceHosts(core, [...command, ...keys.map((k) => rawEnv[k] ?? "")]);
    const env = Object.fromEntries(keys.map((k, i) => [k, resolved[command.length + i] ?? ""]));
    const run = await o.prepare(pod, { ...container, command: resolved.slice(0, command.length), args: [] }, env);
    writeFileSync(o.logFile, "");
    try {
      const out = await runToCriLog(run.command, run.env, o.logFile, run.cwd);
      if (out.code !== 0)
        errors.push(`${name}: the ${o.container} container exited ${out.code}: ${out.stderr.slice(-500)}`);
      logs.set(name, out.stdout);
    } finally {
      run.cleanup?.();
    }
    const release = { metadata: { labels: { [JOB_POD_RELEASE_LABEL]: "true" } } };
    await plane.api("PATCH", `/api/v1/namespaces/${namespace}/pods/${name}`, release, {
      contentType: "application/merge-patch+json",
    });
  };

  const poll = pollInBackground(
    async () => {
      const pods = (await core.listNamespacedPod({ namespace, labelSelector: o.labelSelector })).items;
      for (const p of pods) {
        const uid = p.metadata?.uid ?? "";
        if (p.status?.phase !== "Running" || handled.has(uid) || p.metadata?.deletionTimestamp !== undefined) continue;
        handled.add(uid);
        await runPod(p).catch((err: unknown) => errors.push(`${p.metadata?.name ?? "?"}: ${(err as Error).message}`));
      }
    },
    250,
    () => undefined, // the namespace may not exist yet
  );

  return {
    logs,
    errors,
    stop: () => poll.stop(),
  };
}
