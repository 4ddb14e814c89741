/**
 * BenchmarkJob: the in-cluster valkey-benchmark run, a batch/v1 Job built by the pure
 * buildBenchmarkJob (components/benchmark/job-manifest.ts; the script is job-script.ts). Pulumi
 * does not wait for the Job to finish (`pulumi.com/skipAwait`); BenchmarkResults does, bounded,
 * and turns its log into rows. The Job is replaced (delete first: its name is fixed) whenever
 * the workload, target, image or `runId` changes, which runs the benchmark again. With
 * `valkeyPodSelectors` it also gets its own NetworkPolicy (no ingress; egress to DNS and the pods it
 * dials, on 6379 only).
 *
 * A mix (`workload.mix`) runs the bundled mix runner (benchmarks/run/mix-job.ts) in `mixImage`:
 * the bundle goes into a ConfigMap `${name}-mix-runner` named after its hash, so new measuring code
 * is a new ConfigMap and a new Job (a new run), as a changed valkey-benchmark script is.
 */
import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  benchmarkPodLabels,
  buildBenchmarkJob,
  runScopedJobName,
  type BenchmarkJobManifestArgs,
} from "./benchmark/job-manifest.js";
import { buildBenchmarkNetworkPolicy } from "./valkey/network-policy.js";
import { PASSWORD_SECRET_KEY } from "../pod/paths.js";
import { bundleMixScript } from "../benchmarks/run/mix-bundle.js";
import { MIX_JOB_FILE } from "../benchmarks/run/mix-job.js";
import { VALKEY_PORT } from "../vocabulary/ports.js";

/** Manifest options passed through unchanged; documented (with defaults) on BenchmarkJobManifestArgs. */
type PassThrough =
  | "mode"
  | "workload"
  | "placement"
  | "resources"
  | "client"
  | "ttlSecondsAfterFinished"
  | "activeDeadlineSeconds"
  | "waitSeconds"
  | "labels"
  | "runId"
  | "clientPods";

export interface BenchmarkJobArgs extends Pick<BenchmarkJobManifestArgs, PassThrough> {
  /** Namespace of the Valkey release (the Job runs next to it). */
  namespace: pulumi.Input<string>;
  /** The Job's metadata.name. @default `vbench-${mode}-<hash of the Job's spec>` (runScopedJobName) */
  jobName?: string;
  /** The Valkey SERVER's image, e.g. "docker.io/valkey/valkey:9.0.2": client and server versions match. */
  image: pulumi.Input<string>;
  /** Replication: the primary Service host; cluster: the client Service host. */
  target: { host: pulumi.Input<string>; /** @default VALKEY_PORT */ port?: number };
  /** Secret with the Valkey password (from the Valkey component); undefined when auth is off. */
  secretName: pulumi.Input<string> | undefined;
  /** Key of the password in that Secret. @default PASSWORD_SECRET_KEY */
  passwordKey?: string;
  /**
   * A mix's Node image (any Node ≥ 22 image running `node` as uid 1000); required with `workload.mix`.
   * @default undefined
   */
  mixImage?: pulumi.Input<string>;
  /**
   * A mix's load generator image (`vload` at LOADGEN_IMAGE_BINARY); required with `workload.mix`. @default undefined
   */
  loadgenImage?: pulumi.Input<string>;
  /**
   * Labels of the pods it dials (cluster: members; replication: the HAProxy pods behind the write Service, plus the
   * members for a mix): when set, a NetworkPolicy `${name}-netpol` confines the pod to them. @default undefined (no
   * policy)
   */
  valkeyPodSelectors?: Record<string, string>[];
}

export class BenchmarkJob extends pulumi.ComponentResource {
  readonly job: k8s.batch.v1.Job;
  /** The Job's name and namespace, for BenchmarkResults. */
  readonly jobName: pulumi.Output<string>;
  readonly namespace: pulumi.Output<string>;
  /** Changes whenever the Job is replaced (a new benchmark run). */
  readonly jobUid: pulumi.Output<string>;
  /** The image the benchmark ran with. */
  readonly image: pulumi.Output<string>;

  constructor(name: string, args: BenchmarkJobArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:benchmark:BenchmarkJob", name, {}, opts);
    const jobName = args.jobName ?? `vbench-${args.mode}`;
    const scoped = args.jobName === undefined;
    const {
      namespace: _ns,
      jobName: _jn,
      image: _im,
      target,
      secretName: _sn,
      passwordKey,
      valkeyPodSelectors,
      mixImage,
      loadgenImage,
      ...passThrough
    } = args;
    const mixScript = args.workload.mix === undefined ? undefined : this.mixScript(name, jobName, args.namespace);
    if (mixScript !== undefined && (mixImage === undefined || loadgenImage === undefined))
      throw new Error(`${name}: the workload has a mix (benchmark.mix): mixImage and loadgenImage are required`);
    const manifest = pulumi
      .all([args.namespace, args.image, target.host, args.secretName, mixImage, loadgenImage, mixScript?.metadata.name])
      .apply(([namespace, image, host, secretName, node, loadgen, configMap]) => {
        const m = buildBenchmarkJob({
          ...passThrough,
          ...(node === undefined || configMap === undefined || loadgen === undefined
            ? {}
            : { mixRunner: { image: node, configMap, loadgenImage: loadgen } }),
          namespace,
          name: jobName,
          image,
          target: { host, port: target.port ?? VALKEY_PORT },
          secretName,
          passwordKey: passwordKey ?? PASSWORD_SECRET_KEY,
        });
        return scoped ? { ...m, metadata: { ...m.metadata, name: runScopedJobName(jobName, m.spec) } } : m;
      });
    const policies: pulumi.Resource[] = [];
    if (valkeyPodSelectors !== undefined) {
      const podLabels = benchmarkPodLabels({ labels: args.labels, mode: args.mode });
      const policy = pulumi
        .output(args.namespace)
        .apply((namespace) =>
          buildBenchmarkNetworkPolicy({ name: `${jobName}-netpol`, namespace, podLabels, valkeyPodSelectors }),
        );
      policies.push(
        new k8s.networking.v1.NetworkPolicy(
          `${name}-netpol`,
          { metadata: policy.metadata, spec: policy.spec },
          { parent: this },
        ),
      );
    }
    // After its NetworkPolicy: the benchmark pod never runs unconfined.
    this.job = new k8s.batch.v1.Job(
      `${name}-job`,
      { metadata: manifest.metadata, spec: manifest.spec },
      { parent: this, deleteBeforeReplace: true, dependsOn: policies },
    );
    this.jobName = this.job.metadata.name;
    this.namespace = this.job.metadata.namespace;
    this.jobUid = this.job.metadata.uid;
    this.image = pulumi.output(args.image);
    this.registerOutputs({ jobName: this.jobName, namespace: this.namespace, jobUid: this.jobUid, image: this.image });
  }

  /** The ConfigMap holding the bundled mix runner, named `${jobName}-mix-<8 hex of the bundle>`. */
  private mixScript(name: string, jobName: string, namespace: pulumi.Input<string>): k8s.core.v1.ConfigMap {
    const bundle = pulumi.output(bundleMixScript());
    return new k8s.core.v1.ConfigMap(
      `${name}-mix-runner`,
      {
        metadata: {
          namespace,
          name: bundle.apply((text) => `${jobName}-mix-${createHash("sha256").update(text).digest("hex").slice(0, 8)}`),
          labels: { "app.kubernetes.io/name": "valkey-benchmark", "app.kubernetes.io/part-of": "valkey-on-eks" },
        },
        data: { [MIX_JOB_FILE]: bundle },
      },
      { parent: this },
    );
  }
}
