/**
 * The stack's outputs: one documented, versioned JSON object (`report`, declared once in
 * benchmarks/report/stack-report-schema.ts) meant for dashboards, plus the kubeconfig and the
 * password as secrets.
 */
import * as pulumi from "@pulumi/pulumi";
import type { StackCost } from "../benchmarks/cost/cost-model.js";
import {
  STACK_REPORT_VERSION,
  type BenchmarkPart,
  type Endpoints,
  type SentinelSummary,
  type StackReportShape,
  type TopologySummary,
} from "../benchmarks/report/stack-report-schema.js";
import type { TopologyCheckReport } from "../core/verify/check-report.js";
import type { StackConfig } from "../config/types.js";
import type { DeployedDrill } from "../components/steps/failure-drill/implementation.js";
import type { RollStepTiming } from "../core/roll/rolling-restart.js";
import type { RestoreCheckReport } from "../components/steps/restore-check/types.js";
import { metricsPart, type AmpPart, type MetricsPart } from "./metrics-output.js";

export { STACK_REPORT_VERSION, type BenchmarkPart, type Endpoints, type SentinelSummary };

/**
 * The report: the schema's shape (benchmarks/report/stack-report-schema.ts, every field documented there) with the
 * parts whose types live above that layer.
 */
export type StackReport = Omit<StackReportShape, "drills"> & {
  /**
   * Added within schemaVersion 1: the failure drills (`drills.enabled`), one row per fault in order, with the local
   * drills' figures (writeOutageMs, recoveryMs, acked/lost and WAIT-confirmed/lost writes, p50/p99/max before and
   * during, per-stream figures, the verifier's report after recovery; `ok` false when a WAIT-confirmed write was
   * lost); null when drills are off.
   */
  drills: DeployedDrill[] | null;
  /**
   * Added within schemaVersion 1: the last rolling restart of the members and Sentinels (the RollingRestart step,
   * after a change of their pod template: image, restart-only setting, resources): each step with its times and the
   * pods in the order they were restarted; empty steps when the last `up` had nothing to roll.
   */
  rollout: RolloutPart | null;
  /**
   * Added within schemaVersion 1: the restore this stack was made from (`restore.from`), as the RestoreCheck step
   * checked it: the backup id and, per shard, its slots, the manifest's keys and expires, DBSIZE on its primary after
   * the restore and that primary; null without `restore.from`.
   */
  restore: RestoreCheckReport | null;
  /**
   * Added within schemaVersion 1: what the stack serves to a Prometheus (stacks/metrics-output.ts): the scrape targets
   * per component, who may scrape them, the scrape job and the alert rule file of its mode; null when
   * `metrics.enabled` is false.
   */
  metrics: MetricsPart | null;
};

/** The Sentinels of a verifier report, JSON-safe; null when the check did not go through Sentinel. */
export function summarizeSentinels(r: TopologyCheckReport | undefined): SentinelSummary[] | null {
  if (r?.sentinels === undefined) return null;
  return r.sentinels.map((s) => ({
    address: s.address,
    zone: s.zone,
    reachable: s.reachable,
    agrees: s.agrees,
  }));
}

/** The JSON-safe summary of a verifier report that the stack outputs carry. */
export function summarizeTopology(r: TopologyCheckReport): TopologySummary {
  return {
    ok: r.ok,
    failureCodes: [...new Set(r.failures.map((f) => f.code))],
    failures: r.failures.map((f) => ({
      code: f.code,
      message: f.message,
      ...(f.node === undefined ? {} : { node: f.node }),
    })),
    primaries: r.shards.map((s) => ({
      address: s.primary.address,
      zone: s.primary.zone,
      slotRanges: [...s.primary.slotRanges],
      keys: s.primary.keys,
      replicas: s.replicas.map((x) => ({ address: x.address, zone: x.zone, crossAz: x.crossAz })),
    })),
    primariesPerZone: r.primariesPerZone,
  };
}

export interface StackReportParts {
  stack: string;
  config: StackConfig;
  endpoints: pulumi.Input<Endpoints>;
  topology: pulumi.Input<TopologyCheckReport> | undefined;
  benchmark: pulumi.Input<BenchmarkPart> | undefined;
  cost?: pulumi.Input<StackCost> | undefined;
  drills?: pulumi.Input<DrillsPart> | undefined;
  rollout?: pulumi.Input<RolloutPart | undefined> | undefined;
  restore?: pulumi.Input<RestoreCheckReport> | undefined;
  /** What `metrics.amp` created (ManagedPrometheus). */
  amp?: pulumi.Input<AmpPart> | undefined;
}

/** What the RollingRestart step gives the report. */
export interface RolloutPart {
  steps: RollStepTiming[];
  restartedPods: string[];
  totalMs: number;
}

/** What the FailureDrill step gives the report. */
export interface DrillsPart {
  drills: DeployedDrill[];
  csv: string;
  note: string;
}

/** Pure: the report from resolved values. */
export function stackReport(
  stack: string,
  config: StackConfig,
  endpoints: Endpoints,
  topology: TopologyCheckReport | undefined,
  benchmark: BenchmarkPart | undefined,
  cost: StackCost | undefined = undefined,
  drills: DrillsPart | undefined = undefined,
  rollout: RolloutPart | undefined = undefined,
  restore: RestoreCheckReport | undefined = undefined,
  amp: AmpPart | undefined = undefined,
): StackReport {
  const first = benchmark?.rows?.[0];
  return {
    schemaVersion: STACK_REPORT_VERSION,
    project: "valkey-on-eks",
    stack,
    platform: config.platform,
    mode: config.valkey.mode,
    pods: config.valkey.pods,
    zones: config.aws.zones,
    // The report always carries the Sentinel fields (null where they do not apply).
    endpoints: { sentinel: null, sentinelPort: null, masterName: null, ...endpoints },
    topology: topology === undefined ? null : summarizeTopology(topology),
    sentinels: summarizeSentinels(topology),
    benchmark: benchmark ?? null,
    cost: cost ?? null,
    drills: drills?.drills ?? null,
    drillsCsv: drills?.csv ?? null,
    drillsNote: drills?.note ?? null,
    rollout: rollout ?? null,
    restore: restore ?? null,
    metrics: metricsPart(config, amp),
    versions: {
      valkeyImage: config.valkey.image,
      server: first?.server_version ?? null,
      client: first?.client_version ?? null,
      kubernetesVersion: config.platform === "eks" ? config.eks.version : null,
      // Auto Mode runs the Karpenter EKS operates, not our chart.
      karpenterChart: config.platform === "eks" && !config.eks.autoMode ? config.karpenter.chartVersion : null,
    },
  };
}

/** The report as one Output, resolved from the components' outputs. */
export function buildStackReport(p: StackReportParts): pulumi.Output<StackReport> {
  return pulumi
    .all([p.endpoints, p.topology, p.benchmark, p.cost, p.drills, p.rollout, p.restore, p.amp])
    .apply(([endpoints, topology, benchmark, cost, drills, rollout, restore, amp]) =>
      stackReport(p.stack, p.config, endpoints as Endpoints, topology, benchmark, cost, drills, rollout, restore, amp),
    );
}
