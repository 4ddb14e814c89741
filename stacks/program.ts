/**
 * The Pulumi program: from a parsed, validated stack config to resources and the stack report.
 * `stacks/index.ts` calls it for `pulumi up`; Automation API users call it inline
 * (`program: () => runProgram({ stack, config, password })`).
 *
 * Order: platform (EKS + Karpenter, or your cluster) → namespace → Valkey (replication or
 * cluster; from a backup with `restore.from`) → AZ-aware cluster bootstrap (cluster mode) → rolling restart (a changed
 * pod template)
 * → live config (changed LIVE valkey.conf directives, CONFIG SET) → topology check → restore check (once per
 * `restore.from`: each shard's DBSIZE against its manifest count) → benchmark Job →
 * benchmark results → topology check again (per-primary key counts after the run) → failure
 * drills (`drills.enabled`, after that check) → outputs.
 * Every count and shape comes from the config as plain values; nothing is created in apply().
 */
import type * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { BenchmarkJob } from "../components/benchmark-job.js";
import { BenchmarkResults } from "../components/steps/benchmark-results/component.js";
import { ClusterBootstrap } from "../components/steps/cluster-bootstrap/component.js";
import { FailureDrill, type FailureDrillArgs } from "../components/steps/failure-drill/component.js";
import { RollingRestart } from "../components/steps/rolling-restart/component.js";
import { LiveConfig } from "../components/steps/live-config/component.js";
import { RestoreCheck } from "../components/steps/restore-check/component.js";
import { TopologyCheck } from "../components/steps/topology-check/component.js";
import type { Rollout } from "../components/valkey/rollout.js";
import { VolumeRelease } from "../components/steps/volume-release/component.js";
import { selectorOf } from "../vocabulary/labels.js";
import { DEFAULT_CLUSTER_RELEASE, ValkeyCluster } from "../components/valkey-cluster.js";
import { releaseLabels } from "../components/shared.js";
import { ValkeyBackup } from "../components/valkey-backup.js";
import { DEFAULT_REPLICATION_RELEASE, ValkeyReplication } from "../components/valkey-replication.js";
import { withCostColumns, type StackCost } from "../benchmarks/cost/cost-model.js";
import { renderResultsCsv } from "../benchmarks/run/results-csv.js";
import { parseImageReference } from "../config/fields.js";
import { workloadFromConfig } from "../config/schema.js";
import { DEFAULT_MIX_DURATION_SECONDS, runsOf, type Workload } from "../vocabulary/workload.js";
import { sloSweepSeconds } from "../vocabulary/slo.js";
import type { StackConfig } from "../config/types.js";
import { costInputsFromConfig, stackCostOutput, withStackTransfer } from "./cost.js";
import { buildStackReport, type BenchmarkPart, type Endpoints, type StackReport } from "./outputs.js";
import { byoPlatform, eksPlatform, type PlatformResult } from "./platform.js";
import { stackRestore } from "./restore.js";
import { awsProviderArgs, createAwsProvider } from "./preflight.js";

export interface ProgramInput {
  /** Stack name, for the report. @default pulumi.getStack() */
  stack?: string;
  /** Ask the AWS Pricing API for live EC2 prices (eks only); false: the price table only. @default true */
  usePricingApi?: boolean;
  config: StackConfig;
  /** The Valkey password (a Pulumi secret); required when `valkey.auth.enabled`. */
  password: pulumi.Input<string> | undefined;
  /**
   * The AWS provider of platform eks (stacks/index.ts passes the one the preflight used).
   * @default createAwsProvider(config)
   */
  awsProvider?: aws.Provider;
}

export interface ProgramOutputs {
  /** The versioned report (stacks/outputs.ts): endpoints, topology, benchmark rows and CSV, versions. */
  report: pulumi.Output<StackReport>;
  /** Secret. */
  kubeconfig: pulumi.Output<string>;
  /** Secret; undefined when auth is off. */
  password: pulumi.Output<string> | undefined;
}

export { selectorOf } from "../vocabulary/labels.js";

/**
 * The server version the benchmark rows record: the image's tag ("…/valkey:9.0.2" → "9.0.2", also
 * when a digest pins it), else its digest, else "latest".
 */
export function imageVersion(image: string): string {
  const ref = parseImageReference(image);
  return ref?.tag ?? ref?.digest ?? "latest";
}

interface ValkeyRelease {
  component: pulumi.Resource;
  /** Labels of the pods the benchmark dials: the members (cluster) or the HAProxy endpoint pods (replication). */
  podSelector: Record<string, string>;
  /** Labels of the data members (a mix reads every member's INFO commandstats). */
  memberSelector: Record<string, string>;
  endpoints: Endpoints;
  selector: string;
  headlessService: string;
  secretName: string | undefined;
  passwordKey: string | undefined;
  /** Replication: how the topology check finds the Sentinels. */
  sentinel?: { selector: string; headlessService: string; port: number; masterName: string };
  /** What the RollingRestart step rolls. */
  rollout: Rollout;
  /** Replication: the HAProxy pods the roll waits on between steps (their `/sentinels` status path). */
  proxy?: { selector: string; statusPort: number };
}

function deployValkey(
  config: StackConfig,
  platform: PlatformResult,
  namespace: k8s.core.v1.Namespace,
  password: ProgramInput["password"],
  volumes: VolumeRelease,
): ValkeyRelease {
  const ns = config.valkey.namespace;
  // `volumes` too: destroy deletes the release first, then VolumeRelease waits for its disks to go.
  // `restore.from`: the members start from a backup (eks: their Pod Identity access exists first).
  const restore = stackRestore(
    config,
    platform,
    config.valkey.mode === "cluster" ? DEFAULT_CLUSTER_RELEASE : DEFAULT_REPLICATION_RELEASE,
  );
  const opts = { provider: platform.provider, dependsOn: [namespace, volumes, ...platform.ready, ...restore.ready] };
  // The `direct` checks connect from outside the pod network: their CIDRs get a NetworkPolicy rule.
  const checkSourceCidrs = config.checks.connector === "direct" ? config.checks.directSourceCidrs : [];
  const common = {
    namespace: ns,
    valkey: config.valkey,
    placement: platform.placement,
    password,
    checkSourceCidrs,
    restore: restore.settings,
    metrics: config.metrics,
  };
  if (config.valkey.mode === "replication")
    return replicationRelease(new ValkeyReplication("valkey", common, opts), ns);
  // With the bootstrap on, lowering valkey.cluster.primaries migrates the slots off the leaving pods before the
  // StatefulSet shrinks.
  const scaleIn = config.checks.bootstrap
    ? { kubeconfig: platform.kubeconfig, context: platform.context, connector: config.checks.connector }
    : undefined;
  return clusterRelease(new ValkeyCluster("valkey-cluster", { ...common, scaleIn }, opts), ns);
}

/** What the steps after it need of a replication release. */
function replicationRelease(r: ValkeyReplication, ns: string): ValkeyRelease {
  return {
    component: r,
    // The benchmark dials the write Service, i.e. the HAProxy pods: its egress admits those.
    podSelector: r.endpointSelector,
    memberSelector: r.podSelector,
    endpoints: {
      namespace: ns,
      write: r.writeHost,
      read: r.readHost,
      port: r.port,
      sentinel: r.sentinelHost,
      sentinelPort: r.sentinelPort,
      masterName: r.masterName,
    },
    selector: selectorOf(r.podSelector),
    headlessService: r.headlessService,
    secretName: r.secretName,
    passwordKey: r.passwordKey,
    sentinel: {
      selector: selectorOf(r.sentinelSelector),
      headlessService: r.sentinelHeadlessService,
      port: r.sentinelPort,
      masterName: r.masterName,
    },
    rollout: r.rollout,
    proxy: { selector: selectorOf(r.endpointSelector), statusPort: r.statusPort },
  };
}

/** What the steps after it need of a cluster-mode release. */
function clusterRelease(c: ValkeyCluster, ns: string): ValkeyRelease {
  return {
    component: c,
    podSelector: c.podSelector,
    memberSelector: c.podSelector,
    endpoints: {
      namespace: ns,
      write: c.clientHost,
      read: null,
      port: c.port,
      sentinel: null,
      sentinelPort: null,
      masterName: null,
    },
    selector: selectorOf(c.podSelector),
    headlessService: c.headlessService,
    secretName: c.secretName,
    passwordKey: c.passwordKey,
    rollout: c.rollout,
  };
}

/** The FailureDrill step (config `drills`), following `after`. */
function failureDrills(
  config: StackConfig,
  valkey: ValkeyRelease,
  target: Omit<
    FailureDrillArgs,
    "mode" | "faults" | "rate" | "preFaultS" | "loadS" | "image" | "loadTarget" | "placement"
  >,
  checkOptions: Pick<FailureDrillArgs, "mode" | "expect" | "replicaLagBytes" | "sentinel">,
  after: pulumi.Resource[],
  platform: PlatformResult,
): FailureDrill {
  const { drills, valkey: v } = config;
  const e = valkey.endpoints;
  const sentinel =
    e.sentinel === null ||
    e.sentinel === undefined ||
    e.sentinelPort === null ||
    e.sentinelPort === undefined ||
    e.masterName === null ||
    e.masterName === undefined
      ? undefined
      : { host: e.sentinel, port: e.sentinelPort, masterName: e.masterName };
  return new FailureDrill("valkey-drills", {
    ...target,
    ...checkOptions,
    faults: drills.faults,
    rate: drills.rate,
    preFaultS: drills.preFaultS,
    loadS: drills.loadS,
    zoneDownS: drills.zoneDownS,
    timeoutS: drills.timeoutS,
    image: drills.image,
    agentImage: v.image,
    loadTarget: { host: e.write, port: e.port, ...(sentinel === undefined ? {} : { sentinel }) },
    secretName: valkey.secretName,
    passwordKey: valkey.passwordKey,
    placement: platform.placement,
    failureDetectionMs: v.mode === "cluster" ? v.cluster.nodeTimeoutMs : v.replication.sentinel.downAfterMilliseconds,
    runId: drills.runId,
    alertsFrom: drills.alertsFrom,
    after,
  });
}

/**
 * The destroy-order guard (components/steps/volume-release/): deleted after the Valkey release
 * (which depends on it) and before the namespace and the platform (EBS CSI add-on, node groups,
 * Karpenter), it deletes the release's PVCs and waits until their volumes are gone.
 */
function releaseVolumesOnDestroy(
  config: StackConfig,
  platform: PlatformResult,
  namespace: k8s.core.v1.Namespace,
): VolumeRelease {
  const release = config.valkey.mode === "cluster" ? DEFAULT_CLUSTER_RELEASE : DEFAULT_REPLICATION_RELEASE;
  // Instance and part-of only: the Sentinel StatefulSet's own selector relabels its PVCs' name.
  const { "app.kubernetes.io/instance": instance, "app.kubernetes.io/part-of": partOf } = releaseLabels(release);
  const selector = selectorOf({
    "app.kubernetes.io/instance": instance as string,
    "app.kubernetes.io/part-of": partOf as string,
  });
  return new VolumeRelease(
    "valkey-volume-release",
    { namespace: config.valkey.namespace, selector, kubeconfig: platform.kubeconfig, context: platform.context },
    { dependsOn: [namespace, ...platform.ready] },
  );
}

/** How every post-deploy step reaches the release's members. */
type CheckTarget = ReturnType<typeof checkTarget>;

function checkTarget(
  config: StackConfig,
  platform: PlatformResult,
  valkey: ValkeyRelease,
  password: pulumi.Output<string> | undefined,
) {
  return {
    namespace: config.valkey.namespace,
    selector: valkey.selector,
    connector: config.checks.connector,
    kubeconfig: platform.kubeconfig,
    password,
    context: platform.context,
    headlessService: valkey.headlessService,
  };
}

/** The topology the checks expect, from the config's counts. */
type CheckOptions = ReturnType<typeof checkOptionsOf>;

function checkOptionsOf(config: StackConfig, valkey: ValkeyRelease) {
  const mode = config.valkey.mode;
  const expect =
    mode === "cluster"
      ? { primaries: config.valkey.cluster.primaries, replicasPerPrimary: config.valkey.cluster.replicasPerPrimary }
      : { replicas: config.valkey.replication.replicas };
  return {
    mode,
    expect,
    replicaLagBytes: config.checks.replicaLagBytes,
    runId: config.checks.runId,
    sentinel: valkey.sentinel,
  };
}

/** What the steps after the Valkey release share. */
interface ProgramContext {
  config: StackConfig;
  platform: PlatformResult;
  valkey: ValkeyRelease;
  target: CheckTarget;
  checkOptions: CheckOptions;
}

/** The Valkey password as a secret; refuses a missing one while auth is on. */
function secretPasswordOf(config: StackConfig, password: ProgramInput["password"]): pulumi.Output<string> | undefined {
  if (config.valkey.auth.enabled && password === undefined) {
    throw new pulumi.RunError(
      "password: required while valkey.auth.enabled is true; run `pulumi config set --secret password <value>`",
    );
  }
  return password === undefined ? undefined : pulumi.secret(password);
}

function deployPlatform(input: ProgramInput): PlatformResult {
  const { config } = input;
  return config.platform === "eks"
    ? eksPlatform(config, input.awsProvider ?? createAwsProvider(config))
    : byoPlatform(config);
}

function createNamespace(config: StackConfig, platform: PlatformResult): k8s.core.v1.Namespace {
  return new k8s.core.v1.Namespace(
    "valkey-namespace",
    { metadata: { name: config.valkey.namespace, labels: { "app.kubernetes.io/part-of": "valkey-on-eks" } } },
    { provider: platform.provider, dependsOn: platform.ready },
  );
}

/** Cluster mode with `checks.bootstrap`: the AZ-aware ClusterBootstrap; else the release itself is what is formed. */
function formTopology(ctx: ProgramContext): pulumi.Resource {
  const { config, valkey, target } = ctx;
  if (ctx.checkOptions.mode !== "cluster" || !config.checks.bootstrap) return valkey.component;
  return new ClusterBootstrap(
    "valkey-cluster-bootstrap",
    {
      ...target,
      expectedPods: config.valkey.pods,
      primaries: config.valkey.cluster.primaries,
      replicasPerPrimary: config.valkey.cluster.replicasPerPrimary,
      // A new stack restored from a backup: pods 0..P-1 hold the shards and become their primaries.
      restored: config.restore.from !== undefined,
    },
    { dependsOn: [valkey.component] },
  );
}

/** The RollingRestart of a changed pod template, then the LiveConfig of changed LIVE directives. */
function rollAndSetLive(ctx: ProgramContext, formed: pulumi.Resource): { rolled: RollingRestart; liveSet: LiveConfig } {
  const { config, valkey, target } = ctx;
  const { mode, expect } = ctx.checkOptions;
  // The StatefulSets are OnDelete: a changed pod template is rolled here, in role order, before anything checks or
  // measures.
  const { live, ...rollout } = valkey.rollout;
  const rolled = new RollingRestart(
    "valkey-rolling-restart",
    {
      ...target,
      mode,
      expect,
      replicaLagBytes: config.checks.replicaLagBytes,
      sentinel: valkey.sentinel,
      proxy: valkey.proxy,
      ...rollout,
    },
    { dependsOn: [formed] },
  );
  // LIVE valkey.conf directives (maxmemory-policy, ...) are not in the templates' hash (nothing rolled for them):
  // CONFIG SET on every running member, after any roll (a restarted pod already read them; setting them again changes
  // nothing).
  const liveSet = new LiveConfig("valkey-live-config", { ...target, directives: live }, { dependsOn: [rolled] });
  return { rolled, liveSet };
}

/**
 * `restore.from`: once per value, on the formed topology and before anything writes (benchmark, drills),
 * each shard's DBSIZE against the manifest count its restoring member reported.
 */
function checkRestore(ctx: ProgramContext, after: pulumi.Resource): RestoreCheck | undefined {
  const { config, valkey, target } = ctx;
  return config.restore.from === undefined
    ? undefined
    : new RestoreCheck(
        "valkey-restore-check",
        { ...target, mode: ctx.checkOptions.mode, sentinel: valkey.sentinel, from: config.restore.from },
        { dependsOn: [after] },
      );
}

/**
 * A mix runs for its duration, once per run (`repeat`), twice with a rate (the closed loop first, not for a soak), and
 * a
 * latency-target sweep after it (as many sweeps as runs): the Job's deadline and the results' wait grow with all of it
 * (a soak runs for hours). 0 without a mix.
 */
function mixSecondsOf(workload: Workload): number {
  const loops = workload.rate !== undefined && workload.soak === undefined ? 2 : 1;
  return workload.mix === undefined
    ? 0
    : (workload.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS) * runsOf(workload) * loops +
        sloSweepSeconds(workload, runsOf(workload));
}

function benchmarkJob(
  ctx: ProgramContext,
  workload: Workload,
  mixSeconds: number,
  after: pulumi.Resource,
): BenchmarkJob {
  const { config, platform, valkey } = ctx;
  const mode = ctx.checkOptions.mode;
  return new BenchmarkJob(
    "valkey-benchmark",
    {
      namespace: config.valkey.namespace,
      image: config.valkey.image,
      mode,
      target: { host: valkey.endpoints.write, port: valkey.endpoints.port },
      workload,
      secretName: valkey.secretName,
      passwordKey: valkey.passwordKey,
      placement: platform.placement,
      resources: config.benchmark.resources,
      clientPods: config.benchmark.clientPods,
      runId: config.benchmark.runId,
      ...(mixSeconds === 0 ? {} : { activeDeadlineSeconds: Math.max(7200, mixSeconds + 1800) }),
      // A mix also reads every member's INFO commandstats (replication: not behind the write Service).
      valkeyPodSelectors:
        workload.mix === undefined || mode === "cluster"
          ? [valkey.podSelector]
          : [valkey.podSelector, valkey.memberSelector],
      ...(workload.mix === undefined
        ? {}
        : { mixImage: config.benchmark.mixImage, loadgenImage: config.benchmark.loadgenImage }),
    },
    { provider: platform.provider, dependsOn: [after] },
  );
}

function benchmarkResults(
  ctx: ProgramContext,
  job: BenchmarkJob,
  workload: Workload,
  mixSeconds: number,
): BenchmarkResults {
  const { config, platform } = ctx;
  return new BenchmarkResults("valkey-benchmark-results", {
    namespace: job.namespace,
    jobName: job.jobName,
    jobUid: job.jobUid,
    kubeconfig: platform.kubeconfig,
    context: platform.context,
    mode: ctx.checkOptions.mode,
    workload,
    serverVersion: imageVersion(config.valkey.image),
    image: job.image,
    runId: config.benchmark.runId,
    clientPods: config.benchmark.clientPods,
    ...(mixSeconds === 0 ? {} : { timeoutSeconds: Math.max(3600, mixSeconds + 1800) }),
  });
}

/**
 * The benchmark Job (after `after`), its results, and with `checks.verify` the topology check after them;
 * the rows carry the data transfer measured against the last check's zones.
 */
function runBenchmark(
  ctx: ProgramContext,
  after: pulumi.Resource,
  before: TopologyCheck | undefined,
): { benchmark: pulumi.Output<BenchmarkPart>; checkAfter: TopologyCheck | undefined } {
  const { config, target, checkOptions } = ctx;
  const workload = workloadFromConfig(config);
  const mixSeconds = mixSecondsOf(workload);
  const job = benchmarkJob(ctx, workload, mixSeconds, after);
  const results = benchmarkResults(ctx, job, workload, mixSeconds);
  const measured = pulumi
    .all([results.rows, results.csv, results.mix])
    .apply(([rows, csv, mix]) => ({ rows, csv, mix: mix ?? null }));
  // `after: [results]` follows the results' runStamp: every benchmark run re-runs this check.
  const checkAfter = config.checks.verify
    ? new TopologyCheck("valkey-check-after-benchmark", { ...target, ...checkOptions, after: [results] })
    : undefined;
  // Data transfer: the mix's member bytes with the members' zones from the check's report (stacks/cost.ts).
  const benchmark = pulumi
    .all([measured, (checkAfter ?? before)?.report])
    .apply(([b, t]) => withStackTransfer(b, t, config));
  return { benchmark, checkAfter };
}

/** Cost (eks only): the estimate of stacks/cost.ts. */
function estimateCost(input: ProgramInput): pulumi.Output<StackCost> | undefined {
  const { config } = input;
  if (config.platform !== "eks") return undefined;
  return stackCostOutput(costInputsFromConfig(config, config.benchmark.enabled ? config.benchmark.clientPods : 0), {
    usePricingApi: input.usePricingApi ?? true,
    providerArgs: awsProviderArgs(config),
    eksVersion: config.eks.version,
  });
}

/** The cost appended to every result row. */
function withCost(
  benchmark: pulumi.Output<BenchmarkPart>,
  cost: pulumi.Output<StackCost>,
): pulumi.Output<BenchmarkPart> {
  return pulumi.all([benchmark, cost]).apply(([b, c]) => {
    // Rows are absent while the results are unknown (preview) or under mocks that give none.
    const rows = withCostColumns(b.rows ?? [], c.usdPerHour);
    return { ...b, rows, csv: renderResultsCsv(rows) };
  });
}

/**
 * Scheduled backups (eks: S3 through Pod Identity; byo: the user's bucket and keys), once the topology is formed and
 * rolled.
 */
function scheduleBackups(ctx: ProgramContext, formed: pulumi.Resource): void {
  const { config, platform, valkey } = ctx;
  new ValkeyBackup(
    "valkey-backup",
    {
      namespace: config.valkey.namespace,
      release: config.valkey.mode === "cluster" ? DEFAULT_CLUSTER_RELEASE : DEFAULT_REPLICATION_RELEASE,
      mode: ctx.checkOptions.mode,
      backup: config.backup,
      seedHost: valkey.endpoints.write,
      region: config.aws.region,
      valkeyImage: config.valkey.image,
      secretName: valkey.secretName,
      placement: platform.placement,
    },
    {
      k8sProvider: platform.provider,
      aws:
        platform.eks === undefined
          ? undefined
          : { clusterName: platform.eks.clusterName, awsProvider: platform.eks.awsProvider },
      dependsOn: [formed],
    },
  );
}

/** The report's parts from the steps that ran (each absent when its step did not). */
interface ReportSteps {
  topology: TopologyCheck | undefined;
  restored: RestoreCheck | undefined;
  benchmark: pulumi.Output<BenchmarkPart> | undefined;
  cost: pulumi.Output<StackCost> | undefined;
  drills: FailureDrill | undefined;
  rolled: RollingRestart;
  /** The platform's AMP part (metrics.amp). */
  amp: PlatformResult["amp"];
}

function programReport(input: ProgramInput, valkey: ValkeyRelease, steps: ReportSteps): pulumi.Output<StackReport> {
  const { drills, rolled } = steps;
  return buildStackReport({
    stack: input.stack ?? pulumi.getStack(),
    config: input.config,
    endpoints: valkey.endpoints,
    topology: steps.topology?.report,
    restore: steps.restored?.report,
    benchmark: steps.benchmark,
    cost: steps.cost,
    amp: steps.amp,
    drills:
      drills === undefined
        ? undefined
        : pulumi.all([drills.drills, drills.csv, drills.note]).apply(([d, csv, note]) => ({ drills: d, csv, note })),
    // Absent while unknown (preview) or under mocks that give none.
    rollout: pulumi
      .all([rolled.steps, rolled.restartedPods, rolled.totalMs])
      .apply(([steps, restartedPods, totalMs]) =>
        steps === undefined ? undefined : { steps, restartedPods, totalMs },
      ),
  });
}

export function runProgram(input: ProgramInput): ProgramOutputs {
  const { config } = input;
  const secretPassword = secretPasswordOf(config, input.password);
  const platform = deployPlatform(input);
  const namespace = createNamespace(config, platform);
  const valkey = deployValkey(
    config,
    platform,
    namespace,
    secretPassword,
    releaseVolumesOnDestroy(config, platform, namespace),
  );
  const target = checkTarget(config, platform, valkey, secretPassword);
  const checkOptions = checkOptionsOf(config, valkey);
  const ctx: ProgramContext = { config, platform, valkey, target, checkOptions };

  const { rolled, liveSet: formed } = rollAndSetLive(ctx, formTopology(ctx));
  // The check re-runs after either step ran (it follows both run stamps).
  const before = config.checks.verify
    ? new TopologyCheck("valkey-check", { ...target, ...checkOptions, after: [rolled, formed] })
    : undefined;
  const restored = checkRestore(ctx, before ?? formed);

  const { benchmark: measured, checkAfter: after } = config.benchmark.enabled
    ? runBenchmark(ctx, restored ?? before ?? formed, before)
    : { benchmark: undefined, checkAfter: undefined };

  const cost = estimateCost(input);
  const benchmark = measured && cost ? withCost(measured, cost) : measured;

  if (config.backup.enabled) scheduleBackups(ctx, formed);

  // Failure drills: after the benchmark results and the check after them (each of their runs re-runs the drills).
  const drills = config.drills.enabled
    ? failureDrills(
        config,
        valkey,
        target,
        checkOptions,
        [after ?? before ?? formed, ...(restored === undefined ? [] : [restored])],
        platform,
      )
    : undefined;

  const report = programReport(input, valkey, {
    topology: after ?? before,
    restored,
    benchmark,
    cost,
    drills,
    rolled,
    amp: platform.amp,
  });
  return { report, kubeconfig: pulumi.secret(platform.kubeconfig), password: secretPassword };
}
