/**
 * The benchmark Job's manifest, as plain values (the BenchmarkJob component wraps it). The pod:
 *
 * - runs the script of job-script.ts with the SERVER's image (client and server versions match);
 * - lands on the Valkey node pool (placement's nodeSelector + tolerations) but never on a node
 *   that runs a Valkey pod: required pod anti-affinity against DATA_PLANE_LABEL="true" per
 *   hostname, so it gets a node of its own, as the seed's runner pod does;
 * - carries CLIENT_LABEL="true" so the Valkey NetworkPolicy lets it reach port 6379;
 * - gets the password only as `env.valueFrom.secretKeyRef` (never in the manifest or argv);
 * - runs non-root with a read-only root filesystem and an emptyDir /tmp for the script's files;
 * - has requests = limits (Guaranteed QoS), restartPolicy Never and backoffLimit 0: a failed
 *   benchmark is reported, not silently retried.
 */
import { createHash } from "node:crypto";
import type { Workload } from "../../vocabulary/workload.js";
import type { ResourceQuantities } from "../../config/types.js";
import { clientContainerSecurity, clientPodBase } from "../client-pod.js";
import { CLIENT_LABEL, type Placement } from "../shared.js";
import type { ObjectMeta, Plain, PodSpec } from "../valkey/k8s-types.js";
import type * as k8s from "@pulumi/kubernetes";
import { buildBenchmarkScript, RUN_ID_ENV } from "./job-script.js";
import { PASSWORD_ENV } from "./log-frames.js";

export type JobSpec = Plain<k8s.types.input.batch.v1.JobSpec>;

/** Name of the benchmark container (the results read this container's log). */
export const BENCHMARK_CONTAINER = "benchmark";

/** uid/gid of the `valkey` user in the official Debian-based valkey images. */
export const VALKEY_IMAGE_UID = 999;

export interface BenchmarkJobManifestArgs {
  namespace: string;
  /** The Job's metadata.name. */
  name: string;
  /** The Valkey SERVER's image (it ships valkey-benchmark). */
  image: string;
  mode: "cluster" | "replication";
  /** Replication: the primary Service host; cluster: the client Service host. */
  target: { host: string; port: number };
  workload: Workload;
  /** Secret holding the password; undefined when auth is off. */
  secretName: string | undefined;
  /** Key of the password in that Secret (PASSWORD_SECRET_KEY). */
  passwordKey: string;
  placement: Placement;
  /** CPU and memory; requests = limits. */
  resources: ResourceQuantities;
  /** Benchmark executable in the image. @default "valkey-benchmark" */
  client?: string;
  /** Delete the finished Job after this long (its log goes with it). @default undefined (kept) */
  ttlSecondsAfterFinished?: number;
  /** Kubernetes kills the Job after this long. @default 7200 */
  activeDeadlineSeconds?: number;
  /** How long the script waits for the target to answer PING. @default 300 */
  waitSeconds?: number;
  /** Extra labels on the Job and its pod. @default {} */
  labels?: Record<string, string>;
  /**
   * A re-run token (config `benchmark.runId`), recorded as the pod template's RUN_ID_ANNOTATION:
   * the template is immutable, so a new value replaces the Job, i.e. runs the benchmark again.
   * @default undefined (no annotation)
   */
  runId?: string;
  /**
   * Client pods: above 1 an Indexed Job (completions = parallelism = N) whose pods meet at a
   * barrier before each test (job-script.ts), one per node (anti-affinity among themselves) and
   * spread over the zones (maxSkew 1). @default 1
   */
  clientPods?: number;
}

/**
 * `${base}-<8 hex>`: a Job name that changes with the Job's spec (workload, target, image,
 * runId). A replaced Job then never collides with the previous one while Kubernetes is still
 * deleting it (the delete is not awaited: `pulumi.com/skipAwait`), which fails the apply with a
 * field-manager conflict on the immutable template.
 */
export function runScopedJobName(base: string, spec: JobSpec): string {
  return `${base}-${createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 8)}`;
}

/** The pod-template annotation carrying `runId`. */
export const RUN_ID_ANNOTATION = "valkey-on-eks/run-id";

/** Labels of the benchmark pod: the NetworkPolicy's client label plus names. */
export function benchmarkPodLabels(a: Pick<BenchmarkJobManifestArgs, "labels" | "mode">): Record<string, string> {
  return {
    ...a.labels,
    "app.kubernetes.io/name": "valkey-benchmark",
    "app.kubernetes.io/component": `benchmark-${a.mode}`,
    "app.kubernetes.io/part-of": "valkey-on-eks",
    [CLIENT_LABEL]: "true",
  };
}

function podSpec(a: BenchmarkJobManifestArgs): PodSpec {
  const script = buildBenchmarkScript({
    workload: a.workload,
    mode: a.mode,
    target: a.target,
    ...(a.client === undefined ? {} : { client: a.client }),
    ...(a.waitSeconds === undefined ? {} : { waitSeconds: a.waitSeconds }),
    ...(a.clientPods === undefined ? {} : { clientPods: a.clientPods }),
  });
  const many = (a.clientPods ?? 1) > 1;
  const clientSelector = { matchLabels: { "app.kubernetes.io/component": `benchmark-${a.mode}`, [CLIENT_LABEL]: "true" } };
  // Several clients: the Job's uid names the barrier keys; one client per node; spread over zones.
  const runIdEnv = many ? [{ name: RUN_ID_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" } } }] : [];
  const ownNode = many ? [{ labelSelector: clientSelector, topologyKey: "kubernetes.io/hostname" }] : [];
  const spread = many
    ? {
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "DoNotSchedule", labelSelector: clientSelector },
        ],
      }
    : {};
  const env = [{ name: "TMPDIR", value: "/tmp" }];
  const secretEnv = a.secretName === undefined ? [] : [{ name: PASSWORD_ENV, valueFrom: { secretKeyRef: { name: a.secretName, key: a.passwordKey } } }];
  const quantities = { cpu: a.resources.cpu, memory: a.resources.memory };
  return {
    ...clientPodBase(a.placement, VALKEY_IMAGE_UID, { antiAffinity: ownNode, ...spread }),
    containers: [
      {
        name: BENCHMARK_CONTAINER,
        image: a.image,
        command: ["/bin/sh", "-c", script],
        env: [...env, ...runIdEnv, ...secretEnv],
        resources: { requests: quantities, limits: { ...quantities } },
        securityContext: clientContainerSecurity(),
        volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
      },
    ],
    volumes: [{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }],
  };
}

/**
 * metadata + spec of the batch/v1 Job. `pulumi.com/skipAwait`: Pulumi does not wait for the
 * Job (its await would fail the update without the log and time out after 10 min);
 * BenchmarkResults waits for it, bounded, and reports the log when it fails.
 */
export function buildBenchmarkJob(a: BenchmarkJobManifestArgs): { metadata: ObjectMeta; spec: JobSpec } {
  const labels = benchmarkPodLabels(a);
  const spec: JobSpec = {
    backoffLimit: 0,
    activeDeadlineSeconds: a.activeDeadlineSeconds ?? 7200,
    template: { metadata: a.runId === undefined ? { labels } : { labels, annotations: { [RUN_ID_ANNOTATION]: a.runId } }, spec: podSpec(a) },
  };
  const pods = a.clientPods ?? 1;
  if (pods > 1) Object.assign(spec, { completionMode: "Indexed", completions: pods, parallelism: pods });
  if (a.ttlSecondsAfterFinished !== undefined) spec.ttlSecondsAfterFinished = a.ttlSecondsAfterFinished;
  return {
    metadata: { name: a.name, namespace: a.namespace, labels, annotations: { "pulumi.com/skipAwait": "true" } },
    spec,
  };
}
