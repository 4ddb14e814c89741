/**
 * Cross-field rules: combinations of keys that each look fine alone but would fail at
 * `pulumi up` time or, worse, leave pods Pending or a topology unverifiable. Each rule reports
 * the key path a user should change.
 */
import {
  allocatableFor,
  isNetworkOptimizedFamily,
  NETWORK_OPTIMIZED_SIBLING,
  networkOptimizedFamily,
  type Allocatable,
} from "./instance-types.js";
import { parseImageReference } from "./fields.js";
import { AMP_WORKSPACE_ARN_RE } from "./metrics-section.js";
import { formatBytes, formatMillicores } from "./quantity.js";
import type { ResourceAmounts, StackConfig, StackInput } from "./types.js";
import { DEFAULT_MIX_DURATION_SECONDS, readsProblem, repeatOrDefault, repeatProblem } from "../vocabulary/workload.js";
import { benchmarkFootprint, EMPTY_MEMBER_BYTES, largestFittingKeyspace } from "../vocabulary/benchmark-footprint.js";
import { HELD_PAST_DETECTION_S, heldFaultS } from "../vocabulary/faults.js";

/**
 * The largest share of limits.memory `maxmemory` may take while RDB or AOF is on. A BGSAVE or
 * AOF rewrite forks; every page the parent writes meanwhile is copied (copy-on-write), so a
 * write-heavy shard needs headroom in proportion to its dataset, on top of replica output
 * buffers (256 MiB hard limit each) and allocator fragmentation (~10%). ElastiCache reserves 25%
 * by default for the same reason (`reserved-memory-percent`); the default `maxmemory` is 75%,
 * and above 80% the rule refuses.
 */
export const MAXMEMORY_SHARE_WITH_FORK = 0.8;

/** Records one problem at a key path (relative to the project namespace). */
export type Report = (path: ReadonlyArray<string | number>, message: string) => void;

/**
 * The major.minor an image's tag names (`9.0.2`, `v9.1`, `9.1.2-alpine`); undefined for other tags (`latest`) or a
 * digest only.
 */
export function imageVersionOf(image: string): { major: number; minor: number; text: string } | undefined {
  const tag = parseImageReference(image)?.tag;
  const m = tag === undefined ? null : /^v?(\d+)\.(\d+)/.exec(tag);
  return m === null ? undefined : { major: Number(m[1]), minor: Number(m[2]), text: tag as string };
}

const describeAmounts = (a: ResourceAmounts | Allocatable): string =>
  `${formatMillicores(a.cpuMillicores)} vCPU / ${formatBytes(a.memoryBytes)}`;

function checkTopology(config: StackConfig, report: Report): void {
  const { valkey, aws, checks } = config;
  if (valkey.mode === "cluster") {
    if (valkey.cluster.primaries < 3)
      report(
        ["valkey", "cluster", "primaries"],
        `must be ≥ 3 in cluster mode (got ${valkey.cluster.primaries}); Valkey cluster needs a majority of 3 primaries to fail over`,
      );
    if (valkey.cluster.replicasPerPrimary < 1)
      report(
        ["valkey", "cluster", "replicasPerPrimary"],
        "must be ≥ 1 in cluster mode, or a lost primary loses its slots",
      );
    const version = imageVersionOf(valkey.image);
    if (version !== undefined && (version.major < 9 || (version.major === 9 && version.minor < 1)))
      report(
        ["valkey", "image"],
        `is Valkey ${version.text} (its tag): in cluster mode the members' AZ failback reads each node's zone from CLUSTER SHARDS, which carries availability-zone only from Valkey 9.1 (valkey-io/valkey#3156); on ${version.text} a zone left holding a primary majority after a failover is never rebalanced. Use 9.1 or newer`,
      );
  } else {
    const { replicas, minReplicasToWrite } = valkey.replication;
    if (minReplicasToWrite > replicas)
      report(
        ["valkey", "replication", "minReplicasToWrite"],
        `must be ≤ valkey.replication.replicas (${replicas}), or every write is refused`,
      );
    if (replicas < 1 && checks.verify)
      report(
        ["valkey", "replication", "replicas"],
        "must be ≥ 1 when checks.verify is on: verify requires a replica in a different AZ from the primary",
      );
    checkSentinel(config, report);
  }
  const pairsAcrossZones = valkey.mode === "cluster" || valkey.replication.replicas >= 1;
  if (pairsAcrossZones && aws.zones.length < 2) {
    report(["aws", "zones"], `cross-AZ primary↔replica pairing needs ≥ 2 zones (got ${aws.zones.length})`);
  }
}

/** Sentinel: a quorum the Sentinels can reach, a majority that can authorise a failover, one Sentinel per zone. */
function checkSentinel(config: StackConfig, report: Report): void {
  const { sentinel, replicas } = config.valkey.replication;
  const path = ["valkey", "replication", "sentinel"];
  const majority = Math.floor(sentinel.replicas / 2) + 1;
  if (sentinel.quorum > sentinel.replicas) {
    report(
      [...path, "quorum"],
      `must be ≤ valkey.replication.sentinel.replicas (${sentinel.replicas}), or no failover can ever be agreed`,
    );
  } else if (sentinel.quorum < majority) {
    report(
      [...path, "quorum"],
      `must be a majority of the ${sentinel.replicas} Sentinels (≥ ${majority}), or a minority cut off by a partition can declare the primary down`,
    );
  }
  if (sentinel.replicas < 3)
    report(
      [...path, "replicas"],
      `must be ≥ 3 (got ${sentinel.replicas}): with fewer, losing one Sentinel (or its zone) loses the majority a failover needs`,
    );
  const zones = config.aws.zones.length;
  if (sentinel.replicas > zones) {
    report(
      [...path, "replicas"],
      `${sentinel.replicas} Sentinels do not fit one per zone over the ${zones} zone${zones === 1 ? "" : "s"} of aws.zones (hard zone spread); use at most ${zones}`,
    );
  }
  const { minReplicasToWrite, minReplicasMaxLag } = config.valkey.replication;
  // A fenced primary keeps acknowledging for up to max lag + 2 s after its replicas fall silent (the
  // lag clock counts whole seconds, the good-replica count refreshes at 1 Hz: valkey src/replication.c,
  // core/drill/bounds.ts partitionWindow); it must stop by the time the Sentinels may promote.
  if (minReplicasToWrite >= 1 && (minReplicasMaxLag + 2) * 1000 > sentinel.downAfterMilliseconds) {
    report(
      ["valkey", "replication", "minReplicasMaxLag"],
      `must be at most valkey.replication.sentinel.downAfterMilliseconds (${sentinel.downAfterMilliseconds} ms) − 2 s while minReplicasToWrite is ${minReplicasToWrite}: a primary cut off from its replicas keeps acknowledging for up to max lag + 2 s (whole-second lag clock, 1 Hz refresh) and must refuse writes before the Sentinels can promote another member, or the writes it keeps acknowledging are lost (got ${minReplicasMaxLag} s)`,
    );
  }
  if (sentinel.failoverTimeoutMs <= sentinel.downAfterMilliseconds) {
    report(
      [...path, "failoverTimeoutMs"],
      `must be above downAfterMilliseconds (${sentinel.downAfterMilliseconds}): a failover cannot time out before the primary is even seen down`,
    );
  }
  if (minReplicasToWrite > 0 && sentinel.parallelSyncs < replicas) {
    report(
      [...path, "parallelSyncs"],
      `${sentinel.parallelSyncs} is below valkey.replication.replicas (${replicas}) while minReplicasToWrite is ${minReplicasToWrite}: after a failover Sentinel re-points that many replicas at a time, and one that does not answer (its zone lost) holds the rest on the dead primary, so the fenced new primary refuses every write until it returns or failover-timeout passes (33 s in a real-pod zone drill); leave it out (all replicas at once) or set ${replicas}`,
    );
  }
  if (sentinel.parallelSyncs > Math.max(1, replicas)) {
    report(
      [...path, "parallelSyncs"],
      `must be ≤ max(1, valkey.replication.replicas) (${Math.max(1, replicas)}): there are no more replicas to resync`,
    );
  }
}

function checkZones(config: StackConfig, input: StackInput, report: Report): void {
  const regionKey = input.aws.region;
  const providerRegion = input["aws:region"];
  if (regionKey !== undefined && providerRegion !== undefined && regionKey !== providerRegion) {
    report(["aws", "region"], `"${regionKey}" differs from aws:region "${providerRegion}"; set one of them`);
  }
  if (config.platform !== "eks") return;
  config.aws.zones.forEach((zone, index) => {
    if (!zone.startsWith(config.aws.region) || zone.length !== config.aws.region.length + 1) {
      report(["aws", "zones", index], `"${zone}" is not a zone of region ${config.aws.region}`);
    }
  });
}

function checkPodResources(config: StackConfig, report: Report): void {
  const { valkey } = config;
  const { requests, limits } = valkey.resourceAmounts;
  if (requests.cpuMillicores > limits.cpuMillicores) {
    report(
      ["valkey", "resources", "requests", "cpu"],
      `${valkey.resources.requests.cpu} exceeds limits.cpu ${valkey.resources.limits.cpu}`,
    );
  }
  if (requests.memoryBytes > limits.memoryBytes) {
    report(
      ["valkey", "resources", "requests", "memory"],
      `${valkey.resources.requests.memory} exceeds limits.memory ${valkey.resources.limits.memory}`,
    );
  }
  const limitCores = Math.ceil(limits.cpuMillicores / 1000);
  if (valkey.ioThreads > limitCores) {
    report(
      ["valkey", "ioThreads"],
      `${valkey.ioThreads} exceeds the pod's ${formatMillicores(limits.cpuMillicores)} vCPU limit; use at most ${limitCores}`,
    );
  }
  if (valkey.maxmemoryBytes >= limits.memoryBytes) {
    report(
      ["valkey", "maxmemory"],
      `${valkey.maxmemory} (${formatBytes(valkey.maxmemoryBytes)}) must be below limits.memory ${valkey.resources.limits.memory}, or the pod is OOM-killed before Valkey evicts`,
    );
  } else if (
    (valkey.persistence.rdb || valkey.persistence.aof) &&
    valkey.maxmemoryBytes > MAXMEMORY_SHARE_WITH_FORK * limits.memoryBytes
  ) {
    report(
      ["valkey", "maxmemory"],
      `${valkey.maxmemory} (${formatBytes(valkey.maxmemoryBytes)}) leaves less than ${100 - 100 * MAXMEMORY_SHARE_WITH_FORK}% of limits.memory ` +
        `${valkey.resources.limits.memory} for the copy-on-write pages of the RDB/AOF-rewrite fork, replica output buffers and fragmentation; ` +
        `use at most ${formatBytes(Math.floor(MAXMEMORY_SHARE_WITH_FORK * limits.memoryBytes))} (or turn persistence off)`,
    );
  }
}

/** Reports a pod request that fits no permitted instance type's allocatable capacity. */
function checkFits(
  permitted: Array<[string, Allocatable]>,
  request: ResourceAmounts,
  path: string[],
  what: string,
  report: Report,
): void {
  if (permitted.length === 0) return;
  if (permitted.some(([, a]) => a.cpuMillicores >= request.cpuMillicores && a.memoryBytes >= request.memoryBytes))
    return;
  const cpuFits = permitted.some(([, a]) => a.cpuMillicores >= request.cpuMillicores);
  const memoryFits = permitted.some(([, a]) => a.memoryBytes >= request.memoryBytes);
  const leaf = !memoryFits ? ["memory"] : !cpuFits ? ["cpu"] : [];
  const largest = permitted.reduce((best, entry) => (entry[1].memoryBytes > best[1].memoryBytes ? entry : best));
  report(
    [...path, ...leaf],
    `${what} request ${describeAmounts(request)} fits no permitted instance type; the largest pod that fits is ${describeAmounts(largest[1])} ` +
      `(${largest[0]}'s allocatable after kube-reserved, eviction threshold and DaemonSets); the pod would stay Pending`,
  );
}

function checkNodePool(config: StackConfig, report: Report): void {
  const usesNodePool = config.platform === "eks" || config.byo.manageKarpenterNodePool;
  if (!usesNodePool) return;
  const { valkey, benchmark, karpenter } = config;
  const { nodePool } = karpenter;
  if (nodePool.networkOptimized && nodePool.instanceTypes === undefined) {
    const without = nodePool.instanceFamilies.filter(
      (f) => networkOptimizedFamily(f) === undefined && !isNetworkOptimizedFamily(f),
    );
    if (without.length > 0) {
      const pairs = Object.entries(NETWORK_OPTIMIZED_SIBLING).map(([f, n]) => `${f} → ${n}`);
      report(
        ["karpenter", "nodePool", "networkOptimized"],
        `${without.join(", ")} ha${without.length === 1 ? "s" : "ve"} no network-optimised sibling in EC2 (the Graviton ones are ${pairs.join(", ")}); ` +
          `pick families from that list (e.g. instanceFamilies: [r8g]), or drop networkOptimized`,
      );
    }
  }
  const permitted = karpenter.nodePool.permittedInstanceTypes.flatMap((type): Array<[string, Allocatable]> => {
    const allocatable = allocatableFor(type);
    return allocatable ? [[type, allocatable]] : [];
  });
  checkFits(permitted, valkey.resourceAmounts.requests, ["valkey", "resources", "requests"], "Valkey pod", report);
  if (benchmark.enabled)
    checkFits(permitted, benchmark.resourceAmounts, ["benchmark", "resources"], "benchmark pod", report);

  const clients = benchmark.enabled ? benchmark.clientPods : 0;
  const extra = {
    cpuMillicores: clients * benchmark.resourceAmounts.cpuMillicores,
    memoryBytes: clients * benchmark.resourceAmounts.memoryBytes,
  };
  const total = {
    cpuMillicores: valkey.pods * valkey.resourceAmounts.requests.cpuMillicores + extra.cpuMillicores,
    memoryBytes: valkey.pods * valkey.resourceAmounts.requests.memoryBytes + extra.memoryBytes,
  };
  const { limits } = karpenter.nodePool;
  const benchmarkPods = clients === 0 ? "" : clients === 1 ? " + the benchmark pod" : ` + ${clients} benchmark pods`;
  const pods = `${valkey.pods} Valkey pod${valkey.pods === 1 ? "" : "s"}${benchmarkPods}`;
  if (total.cpuMillicores > limits.amounts.cpuMillicores) {
    report(
      ["karpenter", "nodePool", "limits", "cpu"],
      `${limits.cpu} is below the ${formatMillicores(total.cpuMillicores)} vCPU that ${pods} request`,
    );
  }
  if (total.memoryBytes > limits.amounts.memoryBytes) {
    report(
      ["karpenter", "nodePool", "limits", "memory"],
      `${limits.memory} is below the ${formatBytes(total.memoryBytes)} that ${pods} request`,
    );
  }
}

function checkBenchmark(config: StackConfig, report: Report): void {
  const { benchmark } = config;
  if (benchmark.enabled && benchmark.mix !== undefined && benchmark.clientPods > 1) {
    report(
      ["benchmark", "clientPods"],
      `a mix runs in one client pod (got ${benchmark.clientPods}); the barrier of several pods is valkey-benchmark's: set 1 or remove benchmark.mix`,
    );
  }
  if (benchmark.enabled && benchmark.soak !== undefined) {
    // The Job logs one line per sample with every member's INFO; the step reads the log back, so it must stay under the
    // kubelet's rotation.
    const durationS = benchmark.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS;
    const lineBytes = SOAK_SAMPLE_BYTES + SOAK_MEMBER_BYTES * config.valkey.pods;
    const samples = Math.floor(durationS / benchmark.soak.sampleSeconds);
    const bytes = samples * lineBytes;
    if (bytes > MAX_BENCHMARK_LOG_BYTES)
      report(
        ["benchmark", "soak", "sampleSeconds"],
        `${samples} samples of ${config.valkey.pods} members' INFO would log about ${Math.round(bytes / 2 ** 20)} MiB, over the ${MAX_BENCHMARK_LOG_BYTES / 2 ** 20} MiB the benchmark step reads back before the kubelet rotates the pod's log (10 MiB): raise sampleSeconds to at least ${Math.ceil((durationS * lineBytes) / MAX_BENCHMARK_LOG_BYTES)} s`,
      );
  }
  if (benchmark.enabled && benchmark.mix !== undefined && benchmark.loadgenImage === undefined)
    report(
      ["benchmark", "loadgenImage"],
      "required with benchmark.mix: the image holding the load generator at /vload (`npm run loadgen:image` builds it from loadgen/; push it to a registry your nodes pull from, docs/deploy-on-aws.md)",
    );
  if (benchmark.soak !== undefined && benchmark.mix === undefined)
    report(["benchmark", "soak"], "samples a mix: set benchmark.mix too, e.g. `get:80,set:20`");
  const repeatWrong = repeatProblem(benchmark.repeat, benchmark.soak !== undefined);
  if (repeatWrong !== undefined) report(["benchmark", "repeat"], repeatWrong);
  if (
    benchmark.soak !== undefined &&
    2 * benchmark.soak.sampleSeconds > (benchmark.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS)
  )
    report(
      ["benchmark", "soak", "sampleSeconds"],
      `${benchmark.soak.sampleSeconds} s leaves fewer than two samples in benchmark.durationSeconds (${benchmark.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS} s)`,
    );
  if (benchmark.enabled && benchmark.reads === "replicas" && benchmark.mix === undefined) {
    report(
      ["benchmark", "reads"],
      "the deployed Job reads from the replicas only in a mix (benchmark.mix: its generator routes the reads and checks from the replicas' INFO commandstats that they served them); valkey-benchmark's tests would read unchecked. Add benchmark.mix, e.g. `get:90,set:10`, or use vbench local / bench --reads replicas",
    );
  }
  const reads = readsProblem(benchmark.reads ?? "primary", benchmark.tests, benchmark.mix);
  if (reads !== undefined) report(["benchmark", "reads"], reads);
  if (benchmark.rate !== undefined && benchmark.mix === undefined)
    report(["benchmark", "rate"], "applies to a mix (open loop): set benchmark.mix too, e.g. `set:100`");
  if (benchmark.enabled && benchmark.slo !== undefined && benchmark.mix === undefined)
    report(
      ["benchmark", "slo"],
      "the deployed Job sweeps a mix only (its generator sends the open-loop rates): set benchmark.mix too, e.g. `get:80,set:20`; vbench local / bench --slo sweep the tests without one",
    );
  for (const key of ["sloSteps", "sloStepSeconds"] as const)
    if (benchmark[key] !== undefined && benchmark.slo === undefined)
      report(["benchmark", key], "applies to a latency-target sweep: set benchmark.slo too, e.g. `p99:2ms`");
  if (benchmark.maxRequests < benchmark.requests) {
    report(
      ["benchmark", "maxRequests"],
      `${benchmark.maxRequests} is below benchmark.requests (${benchmark.requests})`,
    );
  }
}

/**
 * The benchmark's keys must fit every member's `maxmemory` when Valkey cannot evict them
 * (`noeviction`, or a `volatile-*` policy: the benchmark sets no TTL): past it every write is
 * refused with OOM and the benchmark Job fails after the deploy.
 */
function checkBenchmarkFits(config: StackConfig, report: Report): void {
  const { benchmark, valkey } = config;
  if (!benchmark.enabled || valkey.maxmemoryPolicy.startsWith("allkeys-")) return;
  // The runs the Job makes (workloadFromConfig's repeat): a soak runs once.
  const runs = repeatOrDefault(benchmark.repeat, benchmark.soak !== undefined);
  const families = benchmarkFootprint(benchmark, runs);
  const bytes = families.reduce((n, f) => n + f.bytes, 0);
  const budget = valkey.maxmemoryBytes - EMPTY_MEMBER_BYTES;
  if (bytes <= budget) return;
  const member = valkey.mode === "cluster" ? "shard" : "member";
  const parts = families.map((f) => `${f.entries} ${f.family} entries ${formatBytes(f.bytes)}`).join(", ");
  const fits = largestFittingKeyspace(benchmark, runs, budget);
  report(
    ["benchmark", "keyspaceLength"],
    `${benchmark.keyspaceLength} key names of ${benchmark.dataSize} B would put about ${formatBytes(bytes)} on each ${member} (${parts}), ` +
      `over valkey.maxmemory ${valkey.maxmemory} (${formatBytes(valkey.maxmemoryBytes)}) less the ${formatBytes(EMPTY_MEMBER_BYTES)} an empty member holds: ` +
      `with maxmemoryPolicy ${valkey.maxmemoryPolicy} the writes are refused (OOM) and the benchmark Job fails. ` +
      (fits > 0 ? `Use keyspaceLength ≤ ${fits}, ` : "Use ") +
      "a smaller benchmark.dataSize, a larger valkey.maxmemory, or an allkeys-* maxmemoryPolicy",
  );
}

/**
 * A private-only API endpoint is reachable from inside the VPC alone, but the Kubernetes provider,
 * the Helm release and the port-forward connector all call it from where `pulumi up` runs.
 */
function checkEndpoint(config: StackConfig, report: Report): void {
  if (config.platform !== "eks" || config.eks.publicEndpoint) return;
  if (config.checks.connector !== "direct") {
    report(
      ["eks", "publicEndpoint"],
      "false needs checks.connector: direct: with a private-only endpoint the Kubernetes provider and the port-forward connector cannot reach the API from outside the VPC; run `pulumi up` from inside the VPC (a bastion, VPN or CI runner in the VPC) with checks.connector: direct, or keep publicEndpoint true and narrow eks.publicAccessCidrs",
    );
  }
}

function checkMetrics(config: StackConfig, report: Report): void {
  const m = config.metrics;
  if (m.prometheusOperator && !m.enabled)
    report(
      ["metrics", "prometheusOperator"],
      "true needs metrics.enabled: true: the PodMonitors would select exporters that do not exist and the rules would alert on series nobody scrapes",
    );
  if (Object.keys(m.monitorLabels).length > 0 && !m.prometheusOperator)
    report(["metrics", "monitorLabels"], "is set but metrics.prometheusOperator is false: nothing would carry them");
  if (m.dashboard.namespace !== undefined && !m.enabled)
    report(
      ["metrics", "dashboard", "namespace"],
      "is set but metrics.enabled is false: the dashboard ships only with the exporters that fill it",
    );
  checkAmp(config, report);
}

/** AMP's managed collector scrapes an EKS cluster the stack made, in its region, when there are exporters. */
function checkAmp(config: StackConfig, report: Report): void {
  const amp = config.metrics.amp;
  if (amp.workspaceArn !== undefined && !amp.enabled)
    report(["metrics", "amp", "workspaceArn"], "is set but metrics.amp.enabled is false: nothing would write to it");
  if (!amp.enabled) return;
  if (config.platform !== "eks")
    report(
      ["metrics", "amp", "enabled"],
      "is for platform eks (the managed collector is created on the EKS cluster the stack makes); on byo create a scraper for your cluster with report.metrics.scrapeJob and load report.metrics.rules (docs/metrics.md)",
    );
  if (!config.metrics.enabled)
    report(
      ["metrics", "amp", "enabled"],
      "true needs metrics.enabled: true: the collector would find no exporter to scrape and the rules would alert on series nobody writes",
    );
  const region = amp.workspaceArn?.match(AMP_WORKSPACE_ARN_RE)?.[1];
  if (region !== undefined && region !== config.aws.region)
    report(
      ["metrics", "amp", "workspaceArn"],
      `is in ${region}, not the stack's region ${config.aws.region}: a managed collector writes only to a workspace in its own region`,
    );
}

/** Add-on versions only mean something where the stack installs the add-ons: platform eks without Auto Mode. */
function checkAddonVersions(config: StackConfig, report: Report): void {
  const where =
    config.platform !== "eks" ? "platform is byo" : config.eks.autoMode ? "eks.autoMode is true" : undefined;
  if (where === undefined) return;
  for (const [addon, version] of Object.entries(config.eks.addonVersions))
    if (version !== undefined)
      report(
        ["eks", "addonVersions", addon],
        `is set but ${where}: the stack installs no EKS add-on there, so nothing would run this version`,
      );
}

function checkByoNodePool(config: StackConfig, report: Report): void {
  const { byo } = config;
  if (config.platform !== "byo" || !byo.manageKarpenterNodePool) return;
  if (byo.karpenterNodeRole === undefined)
    report(
      ["byo", "karpenterNodeRole"],
      "is required while byo.manageKarpenterNodePool is true: the EC2NodeClass needs the node IAM role name",
    );
  if (byo.karpenterDiscoveryTag === undefined)
    report(
      ["byo", "karpenterDiscoveryTag"],
      "is required while byo.manageKarpenterNodePool is true: the EC2NodeClass selects subnets and security groups by karpenter.sh/discovery",
    );
}

/**
 * The benchmark Job's log, at most (the kubelet rotates a container's log at 10 MiB by default; the step reads the
 * current file).
 */
export const MAX_BENCHMARK_LOG_BYTES = 8 * 2 ** 20;
/**
 * Bounds of a soak sample line without its members' INFO, and of one member's INFO in it
 * (tests/benchmarks/mix-job-bundle.test.ts checks real lines against them).
 */
export const SOAK_SAMPLE_BYTES = 300;
export const SOAK_MEMBER_BYTES = 500;

/**
 * Writes per load stream a drill may log: 2 streams × 120 bytes × this stays well under the kubelet's 10 MiB log
 * rotation.
 */
export const MAX_DRILL_WRITES_PER_STREAM = 30_000;

/** Failure drills: recovery is the verifier passing; a zone drill needs another zone; the fault inside the load. */
function checkDrills(config: StackConfig, report: Report): void {
  const { drills, checks, aws } = config;
  if (!drills.enabled) return;
  if (!checks.verify)
    report(
      ["drills", "enabled"],
      "needs checks.verify: true: a drill's recovery is the topology verifier passing again, zones included",
    );
  if (drills.faults.includes("zone") && aws.zones.length < 2)
    report(
      ["drills", "faults"],
      `zone needs ≥ 2 zones in aws.zones (got ${aws.zones.length}): losing the only zone leaves nothing to fail over to`,
    );
  if (drills.rate * drills.loadS > MAX_DRILL_WRITES_PER_STREAM)
    report(
      ["drills", "rate"],
      `${drills.rate} writes/s × drills.loadS ${drills.loadS} s is over ${MAX_DRILL_WRITES_PER_STREAM} writes per stream: the load pod's log (its records, about 120 bytes each) would outgrow the kubelet's 10 MiB log rotation`,
    );
  const held = drills.faults.find((f) => f === "freeze" || f === "partition");
  const detectionMs =
    config.valkey.mode === "cluster"
      ? config.valkey.cluster.nodeTimeoutMs
      : config.valkey.replication.sentinel.downAfterMilliseconds;
  const holdS = held === undefined ? 0 : heldFaultS(detectionMs);
  if (drills.loadS < drills.preFaultS + holdS + 10)
    report(
      ["drills", "loadS"],
      held === undefined
        ? `${drills.loadS} s leaves less than 10 s of load after the fault (drills.preFaultS is ${drills.preFaultS}); use at least ${drills.preFaultS + 10}`
        : `${drills.loadS} s leaves less than 10 s of load after ${held}, which holds ${holdS} s (failure detection ${detectionMs} ms + ${HELD_PAST_DETECTION_S} s) after drills.preFaultS ${drills.preFaultS} s; use at least ${drills.preFaultS + holdS + 10}`,
    );
}

/**
 * Backup and restore reach S3 through EKS Pod Identity (eks) or the user's server and keys (byo); a cluster restore
 * needs the bootstrap to pin the restored primaries.
 */
function checkBackup(config: StackConfig, report: Report): void {
  const { backup, restore } = config;
  if (config.platform === "eks") {
    if (backup.endpoint !== undefined)
      report(
        ["backup", "endpoint"],
        "is for platform byo: on eks the backup writes to Amazon S3 through EKS Pod Identity",
      );
    if (backup.credentialsSecret !== undefined)
      report(
        ["backup", "credentialsSecret"],
        "is for platform byo: on eks the backup gets its credentials from EKS Pod Identity (no static keys)",
      );
  } else if (backup.enabled) {
    if (backup.bucket === undefined)
      report(["backup", "bucket"], "is required on platform byo: the stack creates a bucket only on eks");
    if (backup.credentialsSecret === undefined)
      report(
        ["backup", "credentialsSecret"],
        "is required on platform byo: name the Secret holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (there is no Pod Identity)",
      );
  }
  if (restore.from === undefined) return;
  // byo: the members' restore-fetch reads the backup with the same server and keys as the backup.
  if (config.platform !== "eks" && !backup.enabled && backup.credentialsSecret === undefined)
    report(
      ["backup", "credentialsSecret"],
      "is required on platform byo with restore.from: the members' restore-fetch init container reads the backup with these keys (there is no Pod Identity)",
    );
  if (config.valkey.mode === "cluster" && !config.checks.bootstrap)
    report(
      ["restore", "from"],
      "needs checks.bootstrap: true in cluster mode: the bootstrap makes the restored members the primaries of their shards",
    );
}

/** Runs every cross-field rule over a resolved config. */
export function checkStackRules(config: StackConfig, input: StackInput, report: Report): void {
  checkTopology(config, report);
  checkZones(config, input, report);
  checkPodResources(config, report);
  checkNodePool(config, report);
  checkBenchmark(config, report);
  checkBenchmarkFits(config, report);
  checkByoNodePool(config, report);
  checkAddonVersions(config, report);
  checkEndpoint(config, report);
  checkDrills(config, report);
  checkBackup(config, report);
  checkMetrics(config, report);
}
