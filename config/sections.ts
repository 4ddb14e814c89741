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
import { CLUSTER_SLOT_COUNT } from "../vocabulary/cluster-slots.js";
import {
  BENCHMARK_TESTS,
  DEFAULT_REPEAT,
  mixProblems,
  parseMixText,
  READ_TARGETS,
  READ_TESTS,
  type MixEntry,
} from "../vocabulary/workload.js";
import {
  ipv4Cidr,
  DNS_LABEL_RE,
  REGION_RE,
  count,
  cpuQuantity,
  imageName,
  imageReference,
  flag,
  memoryQuantity,
  quantityLike,
  runId,
  section,
  unique,
} from "./fields.js";
import { parseMemoryQuantity } from "./quantity.js";
import {
  DEFAULT_SLO_STEP_SECONDS,
  DEFAULT_SLO_STEPS,
  MAX_SLO_STEP_SECONDS,
  MAX_SLO_STEPS,
  parseSlo,
  type SloTarget,
} from "../vocabulary/slo.js";
import { drillsSchema } from "./drills-section.js";
import { backupSchema, restoreSchema } from "./backup-section.js";
import { awsSchema, eksSchema, karpenterSchema, networkSchema } from "./platform-sections.js";
import { metricsSchema } from "./metrics-section.js";
import { versions } from "../versions.js";
import { CLIENT_ZONES } from "../vocabulary/client-zones.js";

export { PROJECT, cpuQuantity, memoryQuantity } from "./fields.js";

export const platformSchema = z
  .enum(["eks", "byo"])
  .default("eks")
  .describe("Where Valkey runs: a new EKS cluster with Karpenter (eks) or a Kubernetes cluster you bring (byo).");

const tolerationSchema = z.strictObject({
  key: z.string().optional().describe("Taint key."),
  operator: z.enum(["Equal", "Exists"]).default("Equal").describe("Toleration operator."),
  value: z.string().optional().describe("Taint value."),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional().describe("Taint effect."),
  tolerationSeconds: z.int().min(0).optional().describe("Seconds a NoExecute taint is tolerated."),
});

export const byoSchema = section(
  {
    kubeconfig: z
      .string()
      .min(1)
      .optional()
      .describe("Path of the kubeconfig file.")
      .meta({ defaultText: "the Kubernetes provider's default" }),
    context: z.string().min(1).optional().describe("kubeconfig context.").meta({ defaultText: "the current context" }),
    nodeSelector: z
      .record(z.string(), z.string())
      .default({})
      .describe("Node labels Valkey and benchmark pods must match."),
    tolerations: z.array(tolerationSchema).default([]).describe("Tolerations added to Valkey and benchmark pods."),
    storageClass: z
      .string()
      .min(1)
      .optional()
      .describe("Existing StorageClass for Valkey volumes.")
      .meta({ defaultText: "the cluster's default class" }),
    manageKarpenterNodePool: flag(false).describe(
      "Create a Karpenter NodePool from `karpenter.nodePool` in your cluster (Karpenter must be installed).",
    ),
    nodeChecks: flag(true).describe(
      "At preview, refuse a zone of `aws.zones` with no schedulable node matching `nodeSelector` and tolerating its taints (the hard zone spread would leave a pod Pending), and warn when a zone's eligible nodes lack the Valkey pods' requests. Skipped with `manageKarpenterNodePool` (Karpenter adds the nodes). false: for an autoscaler that scales a zone's pool up from zero nodes.",
    ),
    karpenterNodeRole: z
      .string()
      .regex(/^[\w+=,.@-]{1,64}$/, { error: "must be an IAM role name (not an ARN)" })
      .optional()
      .describe(
        "IAM role name the Valkey EC2NodeClass gives its nodes (it needs an EC2_LINUX access entry); required with manageKarpenterNodePool.",
      )
      .meta({ defaultText: "none" }),
    karpenterDiscoveryTag: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Value of the `karpenter.sh/discovery` tag on the subnets and security groups Valkey nodes use; required with manageKarpenterNodePool.",
      )
      .meta({ defaultText: "none" }),
  },
  "Your own Kubernetes cluster (platform byo only).",
);

const resourcePair = (cpu: string, memory: string, what: string, description: string) =>
  section(
    { cpu: cpuQuantity(cpu).describe(`CPU ${what}.`), memory: memoryQuantity(memory).describe(`Memory ${what}.`) },
    description,
  );

export const valkeySchema = section(
  {
    namespace: z
      .string()
      .regex(DNS_LABEL_RE, { error: "must be a Kubernetes namespace name (lower-case DNS label)" })
      .default("valkey")
      .describe("Kubernetes namespace of the Valkey pods."),
    image: imageReference(versions.VALKEY_IMAGE).describe(
      "Valkey container image of the members, Sentinels and benchmark pods: `name:tag`, `name@sha256:<digest>` or both (`name:tag@sha256:<digest>`: the digest is what is pulled, the tag stays for people). The default is the Valkey project's image on ECR Public (no anonymous pull limit like Docker Hub's); point it at your own mirror, e.g. an ECR pull-through cache.",
    ),
    mode: z
      .enum(["replication", "cluster"])
      .default("replication")
      .describe("Topology: one primary with replicas, or sharded cluster mode."),
    replication: section(
      {
        replicas: count(0, 3).describe(
          "Replicas of the one primary: the release runs 1 + replicas equal members, any of which Sentinel may promote.",
        ),
        minReplicasToWrite: count(0, 1).describe(
          "Valkey `min-replicas-to-write`, applied on every member so whichever is primary refuses writes (NOREPLICAS) with fewer replicas that acknowledged within minReplicasMaxLag. The default 1 fences an isolated, frozen or partitioned old primary: it stops acknowledging writes within minReplicasMaxLag + 2 s (the server counts the lag in whole seconds and re-checks it once a second), so the writes a failover can drop are bounded; the price is that writes are refused while no replica is linked. 0 turns fencing off (every write a cut-off primary takes after the fault may be lost).",
        ),
        minReplicasMaxLag: count(1, 3).describe(
          "Valkey `min-replicas-max-lag` in seconds: a replica that has not acknowledged for longer does not count towards minReplicasToWrite. Max lag + 2 s (the server's whole-second lag clock and 1 Hz refresh) must stay within sentinel.downAfterMilliseconds, so a cut-off primary fences itself before the Sentinels can promote another member.",
        ),
        sentinel: section(
          {
            replicas: count(1, 3).describe(
              "Sentinels (one StatefulSet, one per zone: hard zone spread); at most one per zone in `aws.zones`.",
            ),
            quorum: count(1, 2).describe(
              "Sentinels that must agree the primary is down before a failover; at most `replicas`, and a majority of them.",
            ),
            downAfterMilliseconds: count(100, 5000).describe(
              "Sentinel `down-after-milliseconds`: no valid reply for this long marks the primary down. A failover the Sentinels' nudge asks for can pick only a replica whose link to the primary has been down less than 10 × this (docs/drills.md); past that the Sentinels' own retry after 2 × failoverTimeoutMs does.",
            ),
            failoverTimeoutMs: count(1000, 60000).describe(
              "Sentinel `failover-timeout` in milliseconds. After a failover attempt that did not finish (no replica to promote, a lost election) no Sentinel tries again for twice this: on real pods, a zone lost within two minutes of such an attempt waited 27-30 s for its failover at 60 s. The Sentinels' nudge (sentinel-start.sh) asks for the failover once the primary is o_down and no Sentinel is failing over, so that wait no longer holds a failover back. In one real-pod run of the all drill at 10 s writes had not resumed 35 s after the fault (17-21 s at 60 s): not measured enough to change the default.",
            ),
            parallelSyncs: z
              .int()
              .min(1)
              .optional()
              .describe(
                "Sentinel `parallel-syncs`: replicas re-pointed to the new primary at once after a failover. Below the replica count, one re-pointed replica that does not answer (its zone lost, its pod gone with its connection left open) holds the others back: Sentinel counts it as in progress and never reaches its own 10 s timeout for it, so the surviving replicas stay on the dead primary and, fenced (`minReplicasToWrite`), the new primary refuses every write until that replica returns or failover-timeout passes (a real-pod zone drill: 33 s). Re-pointed replicas resync partially (the new primary keeps the replication history), so all at once costs little.",
              )
              .meta({ defaultText: "valkey.replication.replicas (at least 1)" }),
          },
          "Sentinel: automatic failover of the primary (mode replication).",
        ),
        haproxyImage: imageReference(versions.HAPROXY_IMAGE).describe(
          "HAProxy image of the write/read endpoints, same forms as `valkey.image`. The default is ECR Public's mirror of the Docker official image.",
        ),
      },
      "Replication mode (mode replication).",
    ),
    cluster: section(
      {
        primaries: z
          .int()
          .min(1)
          .max(
            CLUSTER_SLOT_COUNT,
            `at most ${CLUSTER_SLOT_COUNT}: each primary owns at least one of Valkey's ${CLUSTER_SLOT_COUNT} hash slots`,
          )
          .default(3)
          .describe(
            `Primaries (shards) over ${CLUSTER_SLOT_COUNT} hash slots; at least 3 in cluster mode, at most ${CLUSTER_SLOT_COUNT}. Beyond the largest shape measured (vocabulary/measured-scale.ts) the preview warns with the measured figures.`,
          ),
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
            cpu: quantityLike("CPU", "requests.cpu").describe(
              "CPU limit of each Valkey pod; left out, equal to the request (Guaranteed QoS).",
            ),
            memory: quantityLike("memory", "requests.memory").describe(
              "Memory limit of each Valkey pod; left out, equal to the request (Guaranteed QoS).",
            ),
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
        storageClass: z
          .string()
          .min(1)
          .optional()
          .describe(
            "StorageClass of each pod's PVC. The StatefulSets keep their PVCs (retention policy Retain); `pulumi destroy` deletes them through the VolumeRelease step and waits until the class's reclaim policy has dealt with the disks (gp3: Delete).",
          )
          .meta({ defaultText: '"gp3" on eks; `byo.storageClass` on byo' }),
        size: memoryQuantity("50Gi").describe("PVC size of each pod."),
      },
      "Persistence and volumes.",
    ),
    replDisklessSyncDelaySeconds: z
      .int()
      .min(0)
      .max(60)
      .default(0)
      .describe(
        "Valkey `repl-diskless-sync-delay` in seconds, both modes: how long a primary waits, after a replica asks for a full resync, before it streams the RDB, so that replicas asking meanwhile share one transfer. 0 (Valkey's own default is 5): in replication mode with minReplicasToWrite 1 a primary refuses writes until one replica is synced, so after a full restart (every member at once: drill `all`) each second of delay is a second more of write outage; replicas that ask during a transfer wait for the next one (one more fork of the primary each). Raise it for large datasets with several replicas that restart together.",
      ),
    ioThreads: z
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe("Valkey `io-threads`.")
      .meta({ defaultText: "max(1, min(8, floor(limits.cpu) − 2))" }),
    maxmemory: z
      .union([z.string(), z.number()], { error: 'must be a memory quantity or a percentage such as "75%"' })
      .superRefine((value, ctx) => {
        const percent = typeof value === "string" ? /^(\d+(?:\.\d+)?)%$/.exec(value.trim()) : null;
        if (percent) {
          const share = Number(percent[1]);
          if (share <= 0 || share > 100)
            ctx.addIssue({
              code: "custom",
              message: `must be a percentage above 0% and at most 100% (got ${String(value)})`,
            });
          return;
        }
        try {
          if (parseMemoryQuantity(value) <= 0) ctx.addIssue({ code: "custom", message: "must be greater than zero" });
        } catch (err) {
          ctx.addIssue({
            code: "custom",
            message: `${(err as Error).message}; or give a percentage of requests.memory such as "75%"`,
          });
        }
      })
      .transform((value) => String(value))
      .default("75%")
      .describe("Valkey `maxmemory`: a memory quantity, or a percentage of resources.requests.memory.")
      .meta({ typeLabel: "memory quantity or percentage" }),
    maxmemoryPolicy: z
      .enum([
        "noeviction",
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
      ])
      .default("noeviction")
      .describe("Valkey `maxmemory-policy`."),
    auth: section(
      {
        enabled: flag(true).describe(
          "Require a password (`requirepass`/`masterauth`); set it with `pulumi config set --secret password`.",
        ),
      },
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
    mix: z
      .string()
      .superRefine((text, ctx) => {
        for (const problem of mixProblems(parseMixText(text))) ctx.addIssue({ code: "custom", message: problem });
      })
      .transform((text) => parseMixText(text) as MixEntry[])
      .optional()
      .describe(
        "A mixed workload instead of `tests`, e.g. `get:80,set:20`: whole percents summing to 100, each command once (vbench local / bench `--mix`). The Job then runs the project's own load generator in `benchmark.mixImage` for `durationSeconds`, and checks the served shares from every member's INFO commandstats.",
      )
      .meta({ defaultText: "none" }),
    durationSeconds: z.int().min(1).optional().describe("How long a mix runs, in seconds.").meta({ defaultText: "30" }),
    rate: z
      .int()
      .min(1)
      .optional()
      .describe(
        "Open loop for a mix: requests per second in total, each sent at its intended time whatever the replies, latency measured from that time (no coordinated omission; vbench local / bench `--rate`).",
      )
      .meta({ defaultText: "none: closed loop" }),
    soak: z
      .strictObject({
        sampleSeconds: z
          .int()
          .min(1)
          .describe(
            "Seconds between two samples (each: the window's rps and latency percentiles, and every member's INFO).",
          ),
      })
      .optional()
      .describe(
        "Soak mode of a mix: samples the load and every member's INFO (used_memory, fragmentation, AOF rewrites and fork time, replica links, full syncs) every `sampleSeconds` for `durationSeconds`, and flags events (AOF rewrite, full resync, link down, role change) in the series (vbench local / bench `--sample-s`).",
      )
      .meta({ defaultText: "none" }),
    slo: z
      .string()
      .superRefine((text, ctx) => {
        const r = parseSlo(text);
        if ("problem" in r) ctx.addIssue({ code: "custom", message: r.problem });
      })
      .transform((text) => (parseSlo(text) as { target: SloTarget }).target)
      .optional()
      .describe(
        "Throughput at a latency target, e.g. `p99:2ms` (p50, p99, p999 or p99.9; us, ms or s): with `benchmark.mix`, the Job also runs an open-loop rate sweep (the generator's closed-loop ceiling, then `sloSteps` rates up to it, each `sloStepSeconds` long, two bisections) and reports the highest rate that met it, with its median and range over three sweeps (vbench local / bench `--slo`; docs/report-and-sweep.md).",
      )
      .meta({ defaultText: "none: no sweep" }),
    sloSteps: z
      .int()
      .min(1)
      .max(MAX_SLO_STEPS)
      .optional()
      .describe("With `slo`: the sweep's rate steps, 1/n … 100 % of the closed-loop ceiling.")
      .meta({ defaultText: String(DEFAULT_SLO_STEPS) }),
    sloStepSeconds: z
      .int()
      .min(1)
      .max(MAX_SLO_STEP_SECONDS)
      .optional()
      .describe("With `slo`: seconds of each sweep step (and of the ceiling's closed-loop run).")
      .meta({ defaultText: String(DEFAULT_SLO_STEP_SECONDS) }),
    mixImage: imageReference(versions.DRILL_LOAD_IMAGE).describe(
      "Image of the benchmark pod when `benchmark.mix` is set: any Node ≥ 22 image that runs `node` as uid 1000 (it runs the bundled mix runner from a ConfigMap, nothing else), same forms as `valkey.image`; the same default as `drills.image`.",
    ),
    loadgenImage: imageName()
      .optional()
      .describe(
        'Image holding the load generator `vload` (loadgen/, a static binary) at `/vload`: required with `benchmark.mix`. An init container copies it into the mix pod, whose `benchmark.mixImage` runs it. No public image carries it: `npm run loadgen:image` builds it from loadgen/ as an OCI archive to push to a registry your nodes pull from (docs/deploy-on-aws.md, "The load generator\'s image").',
      )
      .meta({ defaultText: "none: required with benchmark.mix" }),
    reads: z
      .enum(READ_TARGETS)
      .optional()
      .describe(
        `Where the reads go: \`primary\`, or \`replicas\` (the GET test, or a mix's ${READ_TESTS.map((t) => t.toUpperCase()).join("/")}; replication: direct and through the read endpoint, cluster: READONLY connections), measured against the primary reads as the read scale-out rows (vbench local / bench \`--reads\`; the deployed Job with \`benchmark.mix\` only).`,
      )
      .meta({ defaultText: "primary" }),
    repeat: z
      .int()
      .min(1)
      .optional()
      .describe(
        "Runs of every test (or of the mix), the tests interleaved across the runs (set get incr set get incr …); each row is the median of its runs with their min–max (`runs`, `rps_min`, … in results.csv; vbench local / bench `--repeat`). A soak runs once.",
      )
      .meta({ defaultText: `${DEFAULT_REPEAT} (a soak: 1)` }),
    minDurationSeconds: z
      .number()
      .min(0)
      .default(5)
      .describe("A test shorter than this is re-run with a request count scaled from its rate."),
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
      .describe(
        "With connector direct: the CIDRs the checks connect from, which the Valkey NetworkPolicy admits to port 6379 (port-forward needs none).",
      ),
    replicaLagBytes: count(0, 1_048_576).describe("Largest acceptable replica lag in bytes."),
    runId: runId("Change it (any new value, e.g. a date) to run the topology checks again on an unchanged stack."),
  },
  "Post-deploy steps.",
);

export const costSchema = section(
  {
    clientZones: z
      .enum(CLIENT_ZONES)
      .default("spread")
      .describe(
        "Where the clients are when data transfer is priced: `spread` (evenly over the zones, so (Z − 1)/Z of each member's client bytes cross zones) or `primary` (every client in the primary's zone; cluster mode: the zone holding the most primaries, ties to the first by name). Replication streams and the cluster bus cross by the members' own zones either way.",
      ),
  },
  "How the cost estimate prices data transfer between zones (measured from every member's INFO byte counters around a mix).",
);

export const passwordSchema = z
  .union([z.string(), z.strictObject({ secure: z.string().min(1) })], {
    error: "must be set with `pulumi config set --secret password ...`",
  })
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
  "network": networkSchema,
  "byo": byoSchema,
  "valkey": valkeySchema,
  "benchmark": benchmarkSchema,
  "checks": checksSchema,
  "drills": drillsSchema,
  "backup": backupSchema,
  "restore": restoreSchema,
  "cost": costSchema,
  "metrics": metricsSchema,
  "password": passwordSchema,
});

/** Whether the stack carries a Valkey password, without its value (never part of the config itself). */
export const passwordStateSchema = z.enum(["secret", "plaintext", "missing"]);

/** The stack input after per-key validation and static defaults, before resolution (resolve.ts). */
export type StackInput = z.output<typeof stackInputSchema>;
