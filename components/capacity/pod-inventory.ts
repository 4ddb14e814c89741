/**
 * Every pod a stack creates on the Valkey node pool, read from the pod templates the builders
 * render (so requests, replicas, anti-affinity and spread cannot drift from what is deployed):
 * the Valkey members; in replication mode the Sentinels and the HAProxy endpoints; the benchmark
 * Job's client pods; the drill's load pod. Plus, under Auto Mode, what EKS add-ons put on its
 * built-in system pool (components/aws/auto-mode.ts autoModeSystemPods). Pure.
 */
import { workloadFromConfig } from "../../config/schema.js";
import { parseCpuQuantity, parseMemoryQuantity } from "../../config/quantity.js";
import type { StackConfig } from "../../config/types.js";
import type { SystemPod } from "../aws/auto-mode.js";
import { buildBenchmarkJob } from "../benchmark/job-manifest.js";
import { karpenterLaunchesNodes, type Placement } from "../shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { VALKEY_PORT } from "../../vocabulary/ports.js";
import { buildDrillLoadJob } from "../steps/failure-drill/load-job.js";
import { DEFAULT_CLUSTER_RELEASE } from "../valkey-cluster.js";
import { DEFAULT_REPLICATION_RELEASE } from "../valkey-replication.js";
import { buildClusterManifests } from "../valkey/cluster-manifests.js";
import type { PodSpec } from "../valkey/k8s-types.js";
import { HOSTNAME_LABEL } from "../valkey/pod-placement.js";
import { buildReplicationManifests } from "../valkey/replication-manifests.js";
import type { Labels, Phase, PodGroup } from "./bin-packing.js";

type Template = { metadata?: { labels?: Labels }; spec?: PodSpec };

/** A group from a rendered pod template: summed container requests, anti-affinity, zone spread, zones. */
export function podGroupOf(name: string, count: number, phase: Phase, template: Template): PodGroup {
  const spec: PodSpec = template.spec ?? { containers: [] };
  const requests = (spec.containers ?? []).map(
    (c) => (c.resources?.requests ?? {}) as Record<string, string | number | undefined>,
  );
  const request = {
    cpuMillicores: requests.reduce((sum, r) => sum + (r.cpu === undefined ? 0 : parseCpuQuantity(r.cpu)), 0),
    memoryBytes: requests.reduce((sum, r) => sum + (r.memory === undefined ? 0 : parseMemoryQuantity(r.memory)), 0),
  };
  const anti = spec.affinity?.podAntiAffinity;
  const per = (key: string | undefined): "node" | "zone" | undefined =>
    key === HOSTNAME_LABEL ? "node" : key === ZONE_LABEL ? "zone" : undefined;
  const requiredApart = (anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []).flatMap((t) => {
    const p = per(t.topologyKey);
    return p === undefined ? [] : [{ selector: { ...t.labelSelector?.matchLabels }, per: p }];
  });
  const preferredApart = (anti?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    .filter((t) => per(t.podAffinityTerm.topologyKey) === "node")
    .map((t) => ({ ...t.podAffinityTerm.labelSelector?.matchLabels }));
  const spread = (spec.topologySpreadConstraints ?? []).find(
    (c) => c.topologyKey === ZONE_LABEL && c.whenUnsatisfiable === "DoNotSchedule",
  );
  const nodeTerms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const zoneTerm = nodeTerms?.[0]?.matchExpressions?.find((e) => e.key === ZONE_LABEL && e.operator === "In");
  return {
    name,
    count,
    phase,
    labels: { ...template.metadata?.labels },
    request,
    ...(zoneTerm?.values === undefined ? {} : { zones: [...zoneTerm.values] }),
    requiredApart,
    preferredApart,
    ...(spread === undefined ? {} : { spreadOver: { ...spread.labelSelector?.matchLabels } }),
  };
}

/** A workload the stack puts on the Valkey node pool, as rendered: the object and its pod template. */
export interface PoolWorkload {
  /** The group's name in the packing ("valkey", "sentinel", "haproxy", "benchmark", "drill-load"). */
  name: string;
  /** Pods it runs at once. */
  count: number;
  phase: Phase;
  /** The object's kind: the builders render spec and metadata, the program's resource type adds the kind. */
  kind: "StatefulSet" | "Deployment" | "Job";
  /** The rendered StatefulSet, Deployment or Job (what the program creates). */
  object: { metadata?: { name?: string; namespace?: string } };
  template: Template;
}

/**
 * The placement the inventory renders with when none is given: the pool's zones and the platform's rule for
 * members per node (what changes the packing); no node selector or tolerations (they do not).
 */
export const zonesOnly = (config: StackConfig): Placement => ({
  zones: config.aws.zones,
  nodeSelector: {},
  tolerations: [],
  storageClass: config.valkey.persistence.storageClass,
  ...(karpenterLaunchesNodes(config) ? { membersPerNode: "one" as const } : {}),
});

/**
 * The workloads on the Valkey node pool, in the order the program creates them, rendered by the program's own
 * builders with `placement` (the node selector and tolerations do not change the packing; the Karpenter test
 * renders them as EKS does).
 */
export function valkeyPoolWorkloads(config: StackConfig, placement: Placement = zonesOnly(config)): PoolWorkload[] {
  const ns = config.valkey.namespace;
  const { metrics } = config;
  const base = { namespace: ns, valkey: config.valkey, placement, auth: config.valkey.auth.enabled, metrics };
  const out: PoolWorkload[] = [];
  const add = (w: Omit<PoolWorkload, "template">, template?: Template) => out.push({ ...w, template: template ?? {} });
  if (config.valkey.mode === "replication") {
    const m = buildReplicationManifests({ ...base, release: DEFAULT_REPLICATION_RELEASE });
    const { statefulSet: sentinel } = m.sentinel;
    const { deployment: haproxy } = m.haproxy;
    const sts = m.statefulSet;
    add(
      { name: "valkey", count: sts.spec?.replicas ?? 0, phase: "release", kind: "StatefulSet", object: sts },
      sts.spec?.template,
    );
    const sentinelCount = sentinel.spec?.replicas ?? 0;
    add(
      { name: "sentinel", count: sentinelCount, phase: "release", kind: "StatefulSet", object: sentinel },
      sentinel.spec?.template,
    );
    const haproxyCount = haproxy.spec?.replicas ?? 0;
    add(
      { name: "haproxy", count: haproxyCount, phase: "release", kind: "Deployment", object: haproxy },
      haproxy.spec?.template,
    );
  } else {
    const m = buildClusterManifests({ ...base, release: DEFAULT_CLUSTER_RELEASE });
    const sts = m.statefulSet;
    add(
      { name: "valkey", count: sts.spec?.replicas ?? 0, phase: "release", kind: "StatefulSet", object: sts },
      sts.spec?.template,
    );
  }
  if (config.benchmark.enabled) {
    const job = buildBenchmarkJob({
      namespace: ns,
      name: "vbench",
      image: config.valkey.image,
      mode: config.valkey.mode,
      target: { host: "endpoint", port: VALKEY_PORT },
      workload: workloadFromConfig(config),
      secretName: undefined,
      passwordKey: "password",
      placement,
      resources: config.benchmark.resources,
      clientPods: config.benchmark.clientPods,
      // A mix's pod: the same requests; its images and bundle do not change what it asks of a node.
      ...(config.benchmark.mix === undefined
        ? {}
        : {
            mixRunner: {
              image: config.benchmark.mixImage,
              configMap: "estimate",
              loadgenImage: config.benchmark.loadgenImage ?? config.benchmark.mixImage,
            },
          }),
    });
    const count = config.benchmark.clientPods;
    add({ name: "benchmark", count, phase: "benchmark", kind: "Job", object: job }, job.spec.template);
  }
  if (config.drills.enabled) {
    const { job } = buildDrillLoadJob({
      namespace: ns,
      name: "drill-load",
      runKey: "estimate",
      mode: config.valkey.mode,
      image: config.drills.image,
      target: { host: "endpoint", port: VALKEY_PORT, sentinel: { host: "sentinel", port: 26379, masterName: "m" } },
      rate: config.drills.rate,
      loadS: config.drills.loadS,
      keyPrefix: "k",
      secretName: undefined,
      passwordKey: "password",
      placement,
      script: "",
    });
    add({ name: "drill-load", count: 1, phase: "drill", kind: "Job", object: job }, job.spec.template);
  }
  return out;
}

/** The pods on the Valkey node pool, in the order the program creates them. */
export function valkeyPoolPods(config: StackConfig): PodGroup[] {
  return valkeyPoolWorkloads(config).map((w) => podGroupOf(w.name, w.count, w.phase, w.template));
}

/** Pods on Auto Mode's built-in system pool, from the cluster args pulumi-eks gets. */
export function systemPoolPods(pods: readonly SystemPod[]): PodGroup[] {
  return pods.map((p) => ({
    name: p.name,
    count: 1,
    phase: "release" as const,
    labels: { "k8s-app": "system" },
    request: { cpuMillicores: p.cpuMillicores, memoryBytes: p.memoryBytes },
    requiredApart: [],
    preferredApart: [{ "k8s-app": "system" }],
  }));
}
