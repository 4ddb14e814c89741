/**
 * kwok's pods run no process. This stand-in makes each benchmark Job pod of a namespace real,
 * as pod-valkeys.ts does for the Valkey pods: when the pod runs, the `benchmark` container's own
 * command (`/bin/sh -c <the Job's script>`, read back from the API server) is run here with the
 * container's env, the local benchmark client standing in for the image's `valkey-benchmark`,
 * against the real valkey-server on the pod IPs, its output served as the container's log
 * through the API server (`pods/log`). The shared part (env, Service hosts, CRI log, completing
 * the pod) is job-pods.ts.
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { resolveBinaries } from "../../../benchmarks/run/binaries.js";
import type { ControlPlane } from "./control-plane.js";
import { standInForJobPods, type JobPods } from "./job-pods.js";

export { criLog } from "./job-pods.js";

export type BenchmarkPods = JobPods;

/**
 * Runs the benchmark Job pods of `namespace` as they start, until stopped. The log goes to the
 * plane's `benchmarkLogFile` (one file: one Job pod at a time is this stand-in's limit); the
 * plane must hold Job pods (`holdJobPods`).
 */
export function standInForBenchmarkJobs(core: k8s.CoreV1Api, plane: ControlPlane, namespace: string): BenchmarkPods {
  const bin = mkdtempSync(join(tmpdir(), "vbench-e2e-bench-bin-"));
  symlinkSync(resolveBinaries().benchmark.path, join(bin, "valkey-benchmark"));
  const pods = standInForJobPods(core, plane, namespace, {
    // Every Job pod but the failure drill's load (no kwok test runs drills: tests/pods/byo-stack.test.ts does, on real
    // pods).
    labelSelector: "job-name,!valkey-on-eks/drill-load",
    container: "benchmark",
    logFile: plane.benchmarkLogFile,
    prepare: (_pod, container, env) => ({
      command: container.command ?? [],
      env: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...env, TMPDIR: tmpdir() },
    }),
  });
  return {
    logs: pods.logs,
    errors: pods.errors,
    stop: async () => {
      await pods.stop();
      rmSync(bin, { recursive: true, force: true });
    },
  };
}
