/**
 * kwok's pods run no process. This stand-in makes each benchmark Job pod of a namespace real,
 * as pod-valkeys.ts does for the Valkey pods: when the pod runs (kwok marked it Running), the
 * container's own command (`/bin/sh -c <the Job's script>`, read back from the API server) is
 * run here with the container's env (the password from the Secret its secretKeyRef names), the
 * local benchmark client standing in for the image's `valkey-benchmark`, against the real
 * valkey-server on the pod IPs. Its output is written, in the CRI log format, to the file kwok
 * serves the `benchmark` container's log from (the plane's ClusterLogs), so `pods/log` through
 * the API server returns it. Then the pod is labelled with the plane's release label and kwok's
 * pod-complete stage moves it to Succeeded, and the Job controller completes the Job.
 *
 * What stands in for cluster DNS and kube-proxy: the Service host in the script
 * (`<service>.<namespace>.svc.cluster.local`) is replaced by the IP of the first Ready pod the
 * Service selects.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { resolveBinaries } from "../../../benchmarks/binaries.js";
import { sleep } from "../../../benchmarks/util/poll-until.js";
import { JOB_POD_RELEASE_LABEL, type ControlPlane } from "./control-plane.js";

export interface BenchmarkPods {
  /** Pod name → the log written for it (plain text). */
  readonly logs: Map<string, string>;
  /** Failures (a script exiting non-zero, an unreadable Secret), reported by the test. */
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

async function serviceIp(core: k8s.CoreV1Api, host: string): Promise<string | undefined> {
  const m = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local$/.exec(host);
  if (m === null) return undefined;
  const [, name = "", namespace = ""] = m;
  const svc = await core.readNamespacedService({ name, namespace });
  const selector = Object.entries(svc.spec?.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
  const ready = pods.filter((p) => p.status?.podIP !== undefined && p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
  ready.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  return ready[0]?.status?.podIP;
}

async function containerEnv(core: k8s.CoreV1Api, namespace: string, c: k8s.V1Container): Promise<Record<string, string>> {
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

function run(command: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [bin = "", ...args] = command;
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs the benchmark Job pods of `namespace` as they start, until stopped. The log goes to the
 * plane's `benchmarkLogFile` (one file: one Job pod at a time is this stand-in's limit); the
 * plane must hold Job pods (`holdJobPods`).
 */
export function standInForBenchmarkJobs(core: k8s.CoreV1Api, plane: ControlPlane, namespace: string): BenchmarkPods {
  const logFile = plane.benchmarkLogFile;
  const logs = new Map<string, string>();
  const errors: string[] = [];
  const handled = new Set<string>();
  const bin = mkdtempSync(join(tmpdir(), "vbench-e2e-bench-bin-"));
  symlinkSync(resolveBinaries().benchmark.path, join(bin, "valkey-benchmark"));
  mkdirSync(dirname(logFile), { recursive: true });
  let stopped = false;

  const runPod = async (pod: k8s.V1Pod): Promise<void> => {
    const name = pod.metadata?.name ?? "?";
    const container = pod.spec?.containers.find((c) => c.name === "benchmark");
    if (container === undefined) throw new Error(`${name} has no benchmark container`);
    const env = await containerEnv(core, namespace, container);
    let command = [...(container.command ?? []), ...(container.args ?? [])];
    const host = /# \S+ target ([^:\s]+):\d+;/.exec(command.join(" "))?.[1];
    const ip = host === undefined ? undefined : await serviceIp(core, host);
    if (host !== undefined && ip !== undefined) command = command.map((part) => part.replaceAll(host, ip));
    const out = await run(command, { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...env, TMPDIR: tmpdir() });
    if (out.code !== 0) errors.push(`${name}: the Job script exited ${out.code}: ${out.stderr.slice(-500)}`);
    writeFileSync(logFile, criLog(out.stdout, out.stderr));
    logs.set(name, out.stdout);
    const release = { metadata: { labels: { [JOB_POD_RELEASE_LABEL]: "true" } } };
    await plane.api("PATCH", `/api/v1/namespaces/${namespace}/pods/${name}`, release, { contentType: "application/merge-patch+json" });
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        const pods = (await core.listNamespacedPod({ namespace, labelSelector: "job-name" })).items;
        for (const p of pods) {
          const uid = p.metadata?.uid ?? "";
          if (p.status?.phase !== "Running" || handled.has(uid)) continue;
          handled.add(uid);
          await runPod(p).catch((err: unknown) => errors.push(`${p.metadata?.name ?? "?"}: ${(err as Error).message}`));
        }
      } catch {
        /* the namespace may not exist yet */
      }
      await sleep(250);
    }
  })();

  return {
    logs,
    errors,
    stop: async () => {
      stopped = true;
      await loop;
      rmSync(bin, { recursive: true, force: true });
    },
  };
}
