/**
 * The stack-file schema, one zod schema per `valkey-on-eks:<section>` key. Each key carries its
 * description (`.describe()`) and static default here; defaults that depend on other keys (region
 * zones, ioThreads, storageClass, workloadName) are optional in the schema, documented through
 * `.meta({ defaultText })`, and filled in by the resolver (resolve.ts). README's config table is
 * rendered from these schemas (render-table.ts), so the description text is user-facing. The
 * types the program uses are inferred from them (types.ts); there is no hand-written copy.
 *
 * Shapes are strict: an unknown key anywhere is an error naming its path.
 */
import { z } from "zod";
import { BENCHMARK_TESTS } from "../benchmarks/workload.js";
import {
  ipv4Cidr,
  DNS_LABEL_RE,
  IAM_PRINCIPAL_RE,
  IAM_ROLE_ARN_RE,
  REGION_RE,
  ZONE_RE,
  count,
  cpuQuantity,
  flag,
  gravitonInstanceType,
  memoryQuantity,
  quantityLike,
  runId,
  section,
  unique,
} from "./fields.js";
import { KNOWN_INSTANCE_SIZES, isGravitonFamily } from "./instance-types.js";
import { parseMemoryQuantity } from "./quantity.js";
import { drillsSchema } from "./drills-section.js";
import { versions } from "../versions.js";

export { PROJECT, cpuQuantity, memoryQuantity } from "./fields.js";

export const platformSchema = z
  .enum(["eks", "byo"])
  .default("eks")
  .describe("Where Valkey runs: a new EKS cluster with Karpenter (eks) or a Kubernetes cluster you bring (byo).");

export const awsSchema = section(
  {
    region: z
      .string()
      .regex(REGION_RE, { error: "must be an AWS region such as us-west-2" })
      .optional()
      .describe("AWS region.")
      .meta({ defaultText: '`aws:region`, else "us-west-2"' }),
    zones: z
      .array(z.string().regex(ZONE_RE, { error: "must be an availability zone such as us-west-2a" }))
      .min(1)
      .superRefine(unique("zone"))
      .optional()
      .describe("Availability zones Valkey pods spread over (hard AZ spread, DoNotSchedule); unique, and in `region` on eks.")
      .meta({ defaultText: "`<region>a`, `<region>b`, `<region>c`" }),
    profile: z
      .string()
      .regex(/^[\w+=,.@-]{1,128}$/, { error: "must be a profile name from ~/.aws/config (letters, digits, _+=,.@-)" })
      .optional()
      .describe(
        "AWS CLI profile of the AWS provider and of every kubeconfig the stack writes (`aws eks get-token --profile`: the Kubernetes provider, the post-deploy steps, the `kubeconfig` output).",
      )
      .meta({ defaultText: "the ambient credentials (AWS_PROFILE, env, instance role)" }),
    roleArn: z
      .string()
      .regex(IAM_ROLE_ARN_RE, { error: "must be an IAM role ARN such as arn:aws:iam::123456789012:role/deployer" })
      .optional()
      .describe("IAM role the AWS provider assumes; every kubeconfig the stack writes gets its cluster token as the same role.")
      .meta({ defaultText: "none" }),
  },
  "AWS region, availability zones and credentials (platform eks).",
);

export const eksSchema = section(
  {
    version: z
      .string()
      .regex(/^1\.\d{2}$/, { error: 'must be a Kubernetes minor version such as "1.33"' })
      .default(versions.EKS_VERSION)
      .describe("EKS Kubernetes version."),
    vpcCidr: ipv4Cidr("must be an IPv4 CIDR with a /16 to /24 prefix", 16, 24).default("10.0.0.0/16").describe("CIDR of the new VPC."),
    autoMode: flag(false).describe(
      "EKS Auto Mode: EKS runs Karpenter, the node add-ons and EBS CSI; the stack adds the Valkey NodePool on its own NodeClass (no Karpenter Helm release, no interruption queue, no system node group).",
    ),
    publicEndpoint: flag(true).describe(
      "Whether the API server endpoint is reachable from the internet; false needs `checks.connector: direct` and a deploy from inside the VPC.",
    ),
    publicAccessCidrs: z
      .array(ipv4Cidr("must be an IPv4 CIDR such as 203.0.113.0/24"))
      .min(1)
      .superRefine(unique("CIDR"))
      .default(["0.0.0.0/0"])
      .describe(
        "CIDRs that may reach the public API endpoint (IAM authentication still applies). The default admits any address because CI runners have no fixed IP; narrow it to your egress IPs.",
      ),
    adminPrincipalArns: z
      .array(z.string().regex(IAM_PRINCIPAL_RE, { error: "must be an IAM role or user ARN such as arn:aws:iam::123456789012:role/admin" }))
      .superRefine(unique("principal"))
      .default([])
      .describe(
        "More IAM roles/users given cluster-admin access entries (AmazonEKSClusterAdminPolicy); the deploying identity is admin already and must not be listed.",
      ),
    // Match Karpenter 1.14 and today's EKS (issue 13): no silent extended-support billing.
    supportType: z
      .enum(["STANDARD", "EXTENDED"])
      .default("STANDARD")
      .describe("EKS upgrade policy: STANDARD (auto-upgraded when standard support ends) or EXTENDED (kept on the version at the extended-support rate)."),
    systemNodes: section(
      {
        instanceType: gravitonInstanceType
          .default("m7g.large")
          .describe("Graviton instance type of the managed node group for system pods (CoreDNS, Karpenter)."),
        count: count(1, 2).describe("Nodes in the system node group."),
        diskSizeGiB: count(20, 50).describe("Root volume size of each system node in GiB."),
      },
      "The managed node group for system pods.",
    ),
  },
  "The EKS cluster (platform eks only).",
);

export const karpenterSchema = section(
  {
    chartVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a chart version such as "1.14.1"' })
      .default(versions.KARPENTER_CHART_VERSION)
      .describe("Karpenter Helm chart version."),
    // No surprise node replacement (issue 13): a pinned AMI release by default.
    amiAlias: z
      .string()
      .regex(/^al2023@(latest|v\d{8})$/, { error: 'must be an AL2023 alias: "al2023@vYYYYMMDD" (pinned) or "al2023@latest"' })
      .default(versions.KARPENTER_AMI_ALIAS)
      .describe("EC2NodeClass AMI alias of the Valkey nodes; `al2023@latest` follows every new EKS AMI (and drifts the nodes to it when drift is allowed)."),
    nodePool: section(
      {
        instanceFamilies: z
          .array(z.string().refine(isGravitonFamily, { error: "must be a Graviton (arm64) instance family such as r7g" }))
          .min(1)
          .superRefine(unique("family"))
          .default(["r7g"])
          .describe("Instance families the Valkey NodePool may launch."),
        networkOptimized: flag(false).describe(
          "Also permit each family's network-optimised sibling (r8g → r8gn; EC2 has them for c6g, c7g, c8g, m8g and r8g only, not r7g or m7g).",
        ),
        instanceTypes: z
          .array(gravitonInstanceType)
          .min(1)
          .superRefine(unique("instance type"))
          .optional()
          .describe("Explicit instance types; when set they replace families × sizes.")
          .meta({ defaultText: "families × sizes" }),
        instanceSizes: z
          .array(z.enum(KNOWN_INSTANCE_SIZES as [string, ...string[]]))
          .min(1)
          .superRefine(unique("size"))
          .default(["large", "xlarge", "2xlarge"])
          .describe("Instance sizes combined with instanceFamilies."),
        capacityType: z
          .literal("on-demand", { error: 'must be "on-demand": spot interruptions would fail over Valkey primaries' })
          .default("on-demand")
          .describe("Capacity type; only on-demand is accepted for the Valkey data pool."),
        architecture: z
          .literal("arm64", { error: 'must be "arm64": the NodePool launches Graviton instances only' })
          .default("arm64")
          .describe("CPU architecture; only arm64 (Graviton) is accepted."),
        allowDrift: flag(false).describe(
          "Let Karpenter replace drifted Valkey nodes (changed AMI, EC2NodeClass or NodePool), one at a time; off: a `Drifted` budget of 0 nodes blocks it.",
        ),
        limits: section(
          {
            cpu: cpuQuantity("64").describe("Total vCPU the NodePool may provision."),
            memory: memoryQuantity("512Gi").describe("Total memory the NodePool may provision."),
          },
          "NodePool limits.",
        ),
      },
      "The Karpenter NodePool for Valkey and benchmark pods.",
    ),
  },
  "Karpenter install and the Valkey data NodePool (platform eks, or byo with manageKarpenterNodePool).",
);

const tolerationSchema = z.strictObject({
  key: z.string().optional().describe("Taint key."),
  operator: z.enum(["Equal", "Exists"]).default("Equal").describe("Toleration operator."),
  value: z.string().optional().describe("Taint value."),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional().describe("Taint effect."),
  tolerationSeconds: z.int().min(0).optional().describe("Seconds a NoExecute taint is tolerated."),
});

export const byoSchema = section(
  {
    kubeconfig: z.string().min(1).optional().describe("Path of the kubeconfig file.").meta({ defaultText: "the Kubernetes provider's default" }),
    context: z.string().min(1).optional().describe("kubeconfig context.").meta({ defaultText: "the current context" }),
    nodeSelector: z.record(z.string(), z.string()).default({}).describe("Node labels Valkey and benchmark pods must match."),
    tolerations: z.array(tolerationSchema).default([]).describe("Tolerations added to Valkey and benchmark pods."),
    storageClass: z.string().min(1).optional().describe("Existing StorageClass for Valkey volumes.").meta({ defaultText: "the cluster's default class" }),
    manageKarpenterNodePool: flag(false).describe("Create a Karpenter NodePool from `karpenter.nodePool` in your cluster (Karpenter must be installed)."),
    karpenterNodeRole: z
      .string()
      .regex(/^[\w+=,.@-]{1,64}$/, { error: "must be an IAM role name (not an ARN)" })
      .optional()
      .describe("IAM role name the Valkey EC2NodeClass gives its nodes (it needs an EC2_LINUX access entry); required with manageKarpenterNodePool.")
      .meta({ defaultText: "none" }),
    karpenterDiscoveryTag: z
      .string()
      .min(1)
      .optional()
      .describe("Value of the `karpenter.sh/discovery` tag on the subnets and security groups Valkey nodes use; required with manageKarpenterNodePool.")
      .meta({ defaultText: "none" }),
  },
  "Your own Kubernetes cluster (platform byo only).",
);

const resourcePair = (cpu: string, memory: string, what: string, description: string) =>
  section({ cpu: cpuQuantity(cpu).describe(`CPU ${what}.`), memory: memoryQuantity(memory).describe(`Memory ${what}.`) }, description);

export const valkeySchema = section(
  {
    namespace: z
      .string()
      .regex(DNS_LABEL_RE, { error: "must be a Kubernetes namespace name (lower-case DNS label)" })
      .default("valkey")
      .describe("Kubernetes namespace of the Valkey pods."),
    image: z
      .string()
      .regex(/^\S+:\S+$|^\S+@sha256:[0-9a-f]{64}$/, { error: "must be an image reference with a tag or digest" })
      .default(versions.VALKEY_IMAGE)
      .describe("Valkey container image."),
    mode: z.enum(["replication", "cluster"]).default("replication").describe("Topology: one primary with replicas, or sharded cluster mode."),
    replication: section(
      {
        replicas: count(0, 3).describe("Replicas of the one primary: the release runs 1 + replicas equal members, any of which Sentinel may promote."),
        minReplicasToWrite: count(0, 1).describe(
          "Valkey `min-replicas-to-write`, applied on every member so whichever is primary refuses writes (NOREPLICAS) with fewer replicas that acknowledged within minReplicasMaxLag. The default 1 fences an isolated, frozen or partitioned old primary: it stops acknowledging writes within minReplicasMaxLag + 1 s, so the writes a failover can drop are bounded; the price is that writes are refused while no replica is linked. 0 turns fencing off (every write a cut-off primary takes after the fault may be lost).",
        ),
        minReplicasMaxLag: count(1, 3).describe(
          "Valkey `min-replicas-max-lag` in seconds: a replica that has not acknowledged for longer does not count towards minReplicasToWrite. Must stay below sentinel.downAfterMilliseconds, so a cut-off primary fences itself before the Sentinels promote another member.",
        ),
        sentinel: section(
          {
            replicas: count(1, 3).describe("Sentinels (one StatefulSet, one per zone: hard zone spread); at most one per zone in `aws.zones`."),
            quorum: count(1, 2).describe("Sentinels that must agree the primary is down before a failover; at most `replicas`, and a majority of them."),
            downAfterMilliseconds: count(100, 5000).describe("Sentinel `down-after-milliseconds`: no valid reply for this long marks the primary down."),
            failoverTimeoutMs: count(1000, 60000).describe("Sentinel `failover-timeout` in milliseconds."),
            parallelSyncs: count(1, 1).describe("Sentinel `parallel-syncs`: replicas resynced from the new primary at once after a failover."),
          },
          "Sentinel: automatic failover of the primary (mode replication).",
        ),
      },
      "Replication mode (mode replication).",
    ),
    cluster: section(
      {
        primaries: count(1, 3).describe("Primaries (shards) over 16384 hash slots; at least 3 in cluster mode."),
        replicasPerPrimary: count(0, 1).describe("Replicas of each primary; at least 1 in cluster mode."),
        nodeTimeoutMs: count(100, 15000).describe("Valkey `cluster-node-timeout` in milliseconds."),
      },
      "Cluster mode (mode cluster).",
    ),
    resources: section(
      {
        // Defaults: Guaranteed QoS (limits = requests) that fits r7g.large, the smallest default
        // size: 1.73 vCPU / 13.9 GiB allocatable after the EKS reserves and DaemonSets
        // (instance-types.ts), so 1.5 vCPU / 12 GiB leaves room for one more small DaemonSet.
        requests: resourcePair("1500m", "12Gi", "request of each Valkey pod", "Per-pod requests."),
        limits: section(
          {
            cpu: quantityLike("CPU", "requests.cpu").describe("CPU limit of each Valkey pod; left out, equal to the request (Guaranteed QoS)."),
            memory: quantityLike("memory", "requests.memory").describe("Memory limit of each Valkey pod; left out, equal to the request (Guaranteed QoS)."),
          },
          "Per-pod limits; left out, equal to the requests: a Guaranteed pod is the last the kubelet evicts under memory pressure.",
        ),
      },
      "Per-pod requests and limits.",
    ),
    persistence: section(
      {
        aof: flag(true).describe("Append-only file (`appendonly yes`)."),
        rdb: flag(true).describe("RDB snapshots (`save`)."),
        appendfsync: z.enum(["always", "everysec", "no"]).default("everysec").describe("Valkey `appendfsync`."),
        storageClass: z.string().min(1).optional().describe("StorageClass of each pod's PVC.").meta({ defaultText: '"gp3" on eks; `byo.storageClass` on byo' }),
        size: memoryQuantity("50Gi").describe("PVC size of each pod."),
      },
      "Persistence and volumes.",
    ),
    ioThreads: z.int().min(1).max(256).optional().describe("Valkey `io-threads`.").meta({ defaultText: "max(1, min(8, floor(limits.cpu) − 2))" }),
    maxmemory: z
      .union([z.string(), z.number()], { error: 'must be a memory quantity or a percentage such as "75%"' })
      .superRefine((value, ctx) => {
        const percent = typeof value === "string" ? /^(\d+(?:\.\d+)?)%$/.exec(value.trim()) : null;
        if (percent) {
          const share = Number(percent[1]);
          if (share <= 0 || share > 100) ctx.addIssue({ code: "custom", message: `must be a percentage above 0% and at most 100% (got ${String(value)})` });
          return;
        }
        try {
          if (parseMemoryQuantity(value) <= 0) ctx.addIssue({ code: "custom", message: "must be greater than zero" });
        } catch (err) {
          ctx.addIssue({ code: "custom", message: `${(err as Error).message}; or give a percentage of requests.memory such as "75%"` });
        }
      })
      .transform((value) => String(value))
      .default("75%")
      .describe("Valkey `maxmemory`: a memory quantity, or a percentage of resources.requests.memory.")
      .meta({ typeLabel: "memory quantity or percentage" }),
    maxmemoryPolicy: z
      .enum(["noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
      .default("noeviction")
      .describe("Valkey `maxmemory-policy`."),
    auth: section(
      { enabled: flag(true).describe("Require a password (`requirepass`/`masterauth`); set it with `pulumi config set --secret password`.") },
      "Authentication.",
    ),
  },
  "The Valkey deployment.",
);

export const benchmarkSchema = section(
  {
    enabled: flag(true).describe("Run valkey-benchmark after deploying."),
    workloadName: z
      .string()
      .regex(/^[\w.-]+$/, { error: "must be letters, digits, '_', '.', '-'" })
      .optional()
      .describe("Tag in results.csv's `workload` column.")
      .meta({ defaultText: "valkey.mode" }),
    requests: count(1, 500_000).describe("`-n`: requests per test."),
    clients: count(1, 50).describe("`-c`: parallel connections."),
    pipeline: count(1, 16).describe("`-P`: pipeline depth."),
    dataSize: count(1, 256).describe("`-d`: value size in bytes."),
    threads: count(1, 4).describe("`--threads`: benchmark client threads."),
    keyspaceLength: count(1, 1_000_000).describe("`-r`: random keys over this many key names."),
    tests: z
      .array(z.enum(BENCHMARK_TESTS))
      .min(1)
      .superRefine(unique("test"))
      .default(["set", "get", "incr"])
      .describe("`-t`: valkey-benchmark tests, in order."),
    minDurationSeconds: z.number().min(0).default(5).describe("A test shorter than this is re-run with a request count scaled from its rate."),
    maxRequests: count(1, 50_000_000).describe("Upper bound on a re-run's scaled request count; at least `requests`."),
    resources: resourcePair("1", "1Gi", "of the benchmark pod (requests = limits)", "Benchmark pod CPU and memory."),
    clientPods: z
      .int()
      .min(1)
      .max(64)
      .default(1)
      .describe(
        "Benchmark client pods (an Indexed Job, one pod per node, spread over zones, never on a Valkey node); each test starts on all pods together, rps is summed, p99 is the worst pod's.",
      ),
    runId: runId(
      "Change it (any new value, e.g. a date) to run the benchmark Job again on an unchanged stack: new results, then the topology check after them.",
    ),
  },
  "The valkey-benchmark run (the seed workload by default).",
);

export const checksSchema = section(
  {
    bootstrap: flag(true).describe("Assign slots and pair replicas across AZs (cluster mode)."),
    verify: flag(true).describe("Verify the topology before benchmarking."),
    connector: z.enum(["port-forward", "direct"]).default("port-forward").describe("How checks reach the Valkey pods."),
    directSourceCidrs: z
      .array(ipv4Cidr("must be an IPv4 CIDR such as 10.0.0.0/16"))
      .superRefine(unique("CIDR"))
      .default([])
      .describe("With connector direct: the CIDRs the checks connect from, which the Valkey NetworkPolicy admits to port 6379 (port-forward needs none)."),
    replicaLagBytes: count(0, 1_048_576).describe("Largest acceptable replica lag in bytes."),
    runId: runId("Change it (any new value, e.g. a date) to run the topology checks again on an unchanged stack."),
  },
  "Post-deploy steps.",
);

export const passwordSchema = z
  .union([z.string(), z.strictObject({ secure: z.string().min(1) })], { error: "must be set with `pulumi config set --secret password ...`" })
  .optional()
  .describe("Valkey password; set it with `pulumi config set --secret password <value>` (must be `secure:`).")
  .meta({ typeLabel: "{ secure: <ciphertext> }", defaultText: "none: required when valkey.auth.enabled" });

/** Every `valkey-on-eks:` key, plus Pulumi's `aws:region`, before cross-field rules and resolution. */
export const stackInputSchema = z.strictObject({
  "platform": platformSchema,
  "aws": awsSchema,
  "aws:region": z
    .string()
    .regex(REGION_RE, { error: "must be an AWS region such as us-west-2" })
    .optional()
    .describe("The AWS provider's region; used when `aws.region` is not set."),
  "eks": eksSchema,
  "karpenter": karpenterSchema,
  "byo": byoSchema,
  "valkey": valkeySchema,
  "benchmark": benchmarkSchema,
  "checks": checksSchema,
  "drills": drillsSchema,
  "password": passwordSchema,
});

/** Whether the stack carries a Valkey password, without its value (never part of the config itself). */
export const passwordStateSchema = z.enum(["secret", "plaintext", "missing"]);
