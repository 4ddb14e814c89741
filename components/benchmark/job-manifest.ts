/**
 * The benchmark Job's manifest, as plain values (the BenchmarkJob component wraps it). The pod:
 *
 * - runs the script of job-script.ts with the SERVER's image (client and server versions match);
 *   or, for a mix (`workload.mix`), the bundled mix runner (benchmarks/run/mix-job.ts) in a Node
 *   image, from a ConfigMap the BenchmarkJob component creates;
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
import { clientContainerSecurity, clientPodBase, NODE_IMAGE_UID } from "../client-pod.js";
import {
  LOADGEN_IMAGE_BINARY,
  LOADGEN_MOUNT,
  MIX_JOB_FILE,
  MIX_JOB_MOUNT,
  MIX_JOB_SETTINGS_ENV,
  mixJobSettingsEnv,
} from "../../benchmarks/run/mix-job.js";
import { LOADGEN_ENV } from "../../benchmarks/run/loadgen.js";
import { CLIENT_LABEL, type Placement } from "../shared.js";
import type { EnvVar, ObjectMeta, Plain, PodSpec } from "../valkey/k8s-types.js";
import type * as k8s from "@pulumi/kubernetes";
import { buildBenchmarkScript, RUN_ID_ENV } from "./job-script.js";
import { PASSWORD_ENV } from "../../benchmarks/run/log-frames.js";

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
  /**
   * A mix (`workload.mix`): the Node image that runs the bundle, the ConfigMap holding it (key
   * MIX_JOB_FILE) and the image holding the load generator at LOADGEN_IMAGE_BINARY (an init
   * container copies it into the pod). Required with a mix, refused without one. @default undefined (valkey-benchmark)
   */
  mixRunner?: { image: string; configMap: string; loadgenImage: string };
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

/** The valkey-benchmark container: job-script.ts in the server's image. */
function benchmarkContainer(a: BenchmarkJobManifestArgs, env: EnvVar[]) {
  const script = buildBenchmarkScript({
    workload: a.workload,
    mode: a.mode,
    target: a.target,
    ...(a.client === undefined ? {} : { client: a.client }),
    ...(a.waitSeconds === undefined ? {} : { waitSeconds: a.waitSeconds }),
    ...(a.clientPods === undefined ? {} : { clientPods: a.clientPods }),
  });
  return {
    image: a.image,
    command: ["/bin/sh", "-c", script],
    env,
    volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
  };
}

const MIX_VOLUME = "mix-runner";

/**
 * The mix container: the bundled runner (benchmarks/run/mix-job-main.ts) in a Node image, its settings in one env var.
 */
function mixContainer(
  a: BenchmarkJobManifestArgs,
  runner: NonNullable<BenchmarkJobManifestArgs["mixRunner"]>,
  env: EnvVar[],
) {
  const settings = mixJobSettingsEnv({
    mode: a.mode,
    target: a.target,
    workload: a.workload,
    ...(a.waitSeconds === undefined ? {} : { waitSeconds: a.waitSeconds }),
  });
  return {
    image: runner.image,
    command: ["node", `${MIX_JOB_MOUNT}/${MIX_JOB_FILE}`],
    env: [
      ...env,
      { name: MIX_JOB_SETTINGS_ENV, value: settings },
      { name: LOADGEN_ENV, value: `${LOADGEN_MOUNT}/vload` },
    ],
    volumeMounts: [
      { name: "tmp", mountPath: "/tmp" },
      { name: MIX_VOLUME, mountPath: MIX_JOB_MOUNT, readOnly: true },
      { name: LOADGEN_VOLUME, mountPath: LOADGEN_MOUNT, readOnly: true },
    ],
  };
}

const LOADGEN_VOLUME = "loadgen";

/** The init container handing the load generator over: it copies itself into the shared emptyDir. */
function loadgenInit(runner: NonNullable<BenchmarkJobManifestArgs["mixRunner"]>) {
  return {
    name: "loadgen",
    image: runner.loadgenImage,
    command: [LOADGEN_IMAGE_BINARY, "install", LOADGEN_MOUNT],
    resources: { requests: { cpu: "50m", memory: "32Mi" }, limits: { cpu: "500m", memory: "64Mi" } },
    securityContext: clientContainerSecurity(),
    volumeMounts: [{ name: LOADGEN_VOLUME, mountPath: LOADGEN_MOUNT }],
  };
}

function podSpec(a: BenchmarkJobManifestArgs): PodSpec {
  const runner = a.mixRunner;
  if ((a.workload.mix !== undefined) !== (runner !== undefined)) {
    throw new RangeError(
      a.workload.mix === undefined
        ? "mixRunner is given but the workload has no mix"
        : "the workload has a mix: mixRunner (the Node image and the ConfigMap of the bundle) is required",
    );
  }
  if (runner !== undefined && (a.clientPods ?? 1) > 1)
    throw new RangeError(
      "a mix runs in one client pod (clientPods 1): the barrier of several pods is valkey-benchmark's",
    );
  const many = (a.clientPods ?? 1) > 1;
  const clientSelector = {
    matchLabels: { "app.kubernetes.io/component": `benchmark-${a.mode}`, [CLIENT_LABEL]: "true" },
  };
  // Several clients: the Job's uid names the barrier keys; one client per node; spread over zones.
  const runIdEnv = many
    ? [
        {
          name: RUN_ID_ENV,
          valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" } },
        },
      ]
    : [];
  const ownNode = many ? [{ labelSelector: clientSelector, topologyKey: "kubernetes.io/hostname" }] : [];
  const spread = many
    ? {
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: clientSelector,
          },
        ],
      }
    : {};
  const secretEnv =
    a.secretName === undefined
      ? []
      : [{ name: PASSWORD_ENV, valueFrom: { secretKeyRef: { name: a.secretName, key: a.passwordKey } } }];
  const env: EnvVar[] = [{ name: "TMPDIR", value: "/tmp" }, ...runIdEnv, ...secretEnv];
  const quantities = { cpu: a.resources.cpu, memory: a.resources.memory };
  const container = runner === undefined ? benchmarkContainer(a, env) : mixContainer(a, runner, env);
  return {
    ...clientPodBase(a.placement, runner === undefined ? VALKEY_IMAGE_UID : NODE_IMAGE_UID, {
      antiAffinity: ownNode,
      ...spread,
    }),
    ...(runner === undefined ? {} : { initContainers: [loadgenInit(runner)] }),
    containers: [
      {
        name: BENCHMARK_CONTAINER,
        image: container.image,
        command: container.command,
        env: container.env,
        resources: { requests: quantities, limits: { ...quantities } },
        securityContext: clientContainerSecurity(),
        volumeMounts: container.volumeMounts,
      },
    ],
    volumes: [
      { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
      ...(runner === undefined
        ? []
        : [
            { name: MIX_VOLUME, configMap: { name: runner.configMap } },
            { name: LOADGEN_VOLUME, emptyDir: { sizeLimit: "64Mi" } },
          ]),
    ],
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
    template: {
      metadata: a.runId === undefined ? { labels } : { labels, annotations: { [RUN_ID_ANNOTATION]: a.runId } },
      spec: podSpec(a),
    },
  };
  const pods = a.clientPods ?? 1;
  if (pods > 1) Object.assign(spec, { completionMode: "Indexed", completions: pods, parallelism: pods });
  if (a.ttlSecondsAfterFinished !== undefined) spec.ttlSecondsAfterFinished = a.ttlSecondsAfterFinished;
  return {
    metadata: { name: a.name, namespace: a.namespace, labels, annotations: { "pulumi.com/skipAwait": "true" } },
    spec,
  };
}
