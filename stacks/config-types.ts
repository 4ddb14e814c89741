/**
 * The resolved stack configuration: what the rest of the program uses after the stack's config
 * has been parsed once at the boundary. Every default is filled in, every quantity is kept both as
 * written (for manifests) and parsed (for arithmetic), and every count is a plain number.
 *
 * The stack-file keys, their types, defaults and descriptions are listed in README.md (generated
 * from the schema in config-sections.ts by `npx tsx stacks/render-config-table.ts --write`).
 */
import type { Workload } from "../benchmarks/workload.js";

/** Where Valkey runs: a new EKS cluster with Karpenter, or a Kubernetes cluster you bring. */
export type Platform = "eks" | "byo";
/** Valkey topology: one primary + N replicas, or P primaries × M replicas over 16384 slots. */
export type ValkeyMode = "replication" | "cluster";
/** How post-deploy checks reach the Valkey pods. */
export type CheckConnector = "port-forward" | "direct";
/** Valkey `appendfsync`. */
export type AppendFsync = "always" | "everysec" | "no";
/** Valkey `maxmemory-policy`. */
export type MaxmemoryPolicy =
  | "noeviction"
  | "allkeys-lru"
  | "allkeys-lfu"
  | "allkeys-random"
  | "volatile-lru"
  | "volatile-lfu"
  | "volatile-random"
  | "volatile-ttl";

/** CPU and memory as written in the stack file, ready for a Kubernetes manifest. */
export interface ResourceQuantities {
  /** CPU quantity, e.g. "1" or "500m". */
  cpu: string;
  /** Memory quantity, e.g. "12Gi". */
  memory: string;
}

/** The same CPU and memory, parsed. */
export interface ResourceAmounts {
  /** CPU in millicores ("1" → 1000). */
  cpuMillicores: number;
  /** Memory in bytes ("12Gi" → 12884901888). */
  memoryBytes: number;
}

/** `aws`: region and availability zones. */
export interface AwsConfig {
  /** @default the `aws:region` provider key, else "us-west-2" */
  region: string;
  /** Zones Valkey pods spread over (hard AZ spread); unique, in `region` on EKS. @default [`${region}a`,`${region}b`,`${region}c`], i.e. ["us-west-2a","us-west-2b","us-west-2c"] */
  zones: string[];
}

/** `eks`: the EKS cluster (platform eks only). */
export interface EksConfig {
  /** Kubernetes minor version. @default "1.33" */
  version: string;
  /** VPC CIDR. @default "10.0.0.0/16" */
  vpcCidr: string;
  /** Whether the API server endpoint is reachable from the internet. @default true */
  publicEndpoint: boolean;
  /** The managed node group for system pods (CoreDNS, Karpenter controller). */
  systemNodes: {
    /** arm64 (Graviton) instance type. @default "m7g.large" */
    instanceType: string;
    /** @default 2 */
    count: number;
    /** Root volume size. @default 50 */
    diskSizeGiB: number;
  };
}

/** `karpenter.nodePool.limits`, both as written and parsed. */
export interface NodePoolLimits extends ResourceQuantities {
  /** The same limits parsed. */
  amounts: ResourceAmounts;
}

/** `karpenter`: the Karpenter install and the Valkey data NodePool. */
export interface KarpenterConfig {
  /** Karpenter Helm chart version. @default "1.14.1" */
  chartVersion: string;
  nodePool: {
    /** @default ["r7g"] */
    instanceFamilies: string[];
    /** Also permit each family's network-optimised sibling (r7g → r7gn). @default false */
    networkOptimized: boolean;
    /** Explicit instance types; when set they replace families × sizes. @default undefined */
    instanceTypes: string[] | undefined;
    /** @default ["large","xlarge","2xlarge"] */
    instanceSizes: string[];
    /** Only on-demand is accepted for the Valkey data pool. @default "on-demand" */
    capacityType: "on-demand";
    /** @default "arm64" */
    architecture: "arm64";
    /** NodePool `limits`. @default { cpu: "64", memory: "512Gi" } */
    limits: NodePoolLimits;
    /** The instance types the NodePool may launch, after families, networkOptimized, sizes and instanceTypes. */
    permittedInstanceTypes: string[];
  };
}

/** One Kubernetes toleration. */
export interface Toleration {
  key?: string | undefined;
  /** @default "Equal" */
  operator: "Equal" | "Exists";
  value?: string | undefined;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute" | undefined;
  tolerationSeconds?: number | undefined;
}

/** `byo`: your own Kubernetes cluster (platform byo only). */
export interface ByoConfig {
  /** Path of the kubeconfig file. @default undefined (the Kubernetes provider's default) */
  kubeconfig: string | undefined;
  /** kubeconfig context. @default undefined (the current context) */
  context: string | undefined;
  /** Node labels Valkey and benchmark pods must match. @default {} */
  nodeSelector: Record<string, string>;
  /** Tolerations added to Valkey and benchmark pods. @default [] */
  tolerations: Toleration[];
  /** Existing StorageClass for Valkey volumes. @default undefined (the cluster's default class) */
  storageClass: string | undefined;
  /** Create a Karpenter NodePool from `karpenter.nodePool` in your cluster (Karpenter must be installed). @default false */
  manageKarpenterNodePool: boolean;
  /** IAM role name of the Valkey EC2NodeClass's nodes; required with manageKarpenterNodePool. @default undefined */
  karpenterNodeRole: string | undefined;
  /** Value of the `karpenter.sh/discovery` tag selecting subnets and security groups; required with manageKarpenterNodePool. @default undefined */
  karpenterDiscoveryTag: string | undefined;
}

/** `valkey`: the Valkey deployment. */
export interface ValkeyConfig {
  /** @default "valkey" */
  namespace: string;
  /** @default "valkey/valkey:9.0.2" */
  image: string;
  /** @default "replication" */
  mode: ValkeyMode;
  replication: {
    /** Replicas of the one primary. @default 3 */
    replicas: number;
    /** Valkey `min-replicas-to-write`. @default 0 */
    minReplicasToWrite: number;
  };
  cluster: {
    /** @default 3 */
    primaries: number;
    /** @default 1 */
    replicasPerPrimary: number;
    /** Valkey `cluster-node-timeout` in ms. @default 15000 */
    nodeTimeoutMs: number;
  };
  /** Per-pod requests and limits as written. @default { requests: { cpu: "1", memory: "12Gi" }, limits: { cpu: "2", memory: "16Gi" } } */
  resources: { requests: ResourceQuantities; limits: ResourceQuantities };
  /** The same requests and limits parsed. */
  resourceAmounts: { requests: ResourceAmounts; limits: ResourceAmounts };
  persistence: {
    /** @default true */
    aof: boolean;
    /** @default true */
    rdb: boolean;
    /** @default "everysec" */
    appendfsync: AppendFsync;
    /** StorageClass of the per-pod PVC. @default "gp3" on eks; byo.storageClass (or the cluster default: undefined) on byo */
    storageClass: string | undefined;
    /** PVC size as written. @default "50Gi" */
    size: string;
    /** PVC size in bytes. */
    sizeBytes: number;
  };
  /** Valkey `io-threads`. @default min(8, floor(limits.cpu) − 2), at least 1 */
  ioThreads: number;
  /** `maxmemory` as written: a memory quantity or a percentage of requests.memory. @default "75%" */
  maxmemory: string;
  /** `maxmemory` in bytes, what valkey.conf gets. */
  maxmemoryBytes: number;
  /** @default "noeviction" */
  maxmemoryPolicy: MaxmemoryPolicy;
  auth: {
    /** Require a password (`requirepass` / `masterauth`). @default true */
    enabled: boolean;
  };
  /** Valkey pods in the chosen mode: 1 + replicas, or primaries × (1 + replicasPerPrimary). */
  pods: number;
}

/**
 * `benchmark`: the valkey-benchmark run. The workload fields (requests `-n`, clients `-c`,
 * pipeline `-P`, dataSize `-d`, threads `--threads`, keyspaceLength `-r`, tests `-t`,
 * minDurationSeconds, maxRequests) are {@link Workload}'s and default to the seed workload
 * (SEED_WORKLOAD: 500000, 50, 16, 256, 4, 1000000, ["set","get","incr"], 5, 50000000).
 */
export interface BenchmarkConfig extends Omit<Workload, "name"> {
  /** @default true */
  enabled: boolean;
  /** Tag in results.csv's `workload` column (Workload.name). @default valkey.mode */
  workloadName: string;
  /** Benchmark pod CPU and memory (requests = limits) as written. @default { cpu: "1", memory: "1Gi" } */
  resources: ResourceQuantities;
  /** The same parsed. */
  resourceAmounts: ResourceAmounts;
  /** Changing it re-runs the benchmark Job, its results and the check after them. @default undefined */
  runId?: string | undefined;
}

/** `checks`: post-deploy steps. */
export interface ChecksConfig {
  /** Assign slots and pair replicas (cluster mode). @default true */
  bootstrap: boolean;
  /** Verify topology before benchmarking. @default true */
  verify: boolean;
  /** @default "port-forward" */
  connector: CheckConnector;
  /** Largest acceptable replica lag in bytes. @default 1048576 */
  replicaLagBytes: number;
  /** Changing it re-runs the topology checks. @default undefined */
  runId?: string | undefined;
}

/** A stack's whole resolved configuration. The Valkey password is never part of it. */
export interface StackConfig {
  /** @default "eks" */
  platform: Platform;
  aws: AwsConfig;
  eks: EksConfig;
  karpenter: KarpenterConfig;
  byo: ByoConfig;
  valkey: ValkeyConfig;
  benchmark: BenchmarkConfig;
  checks: ChecksConfig;
}

/** Whether the stack carries a Valkey password, without its value. */
export type PasswordState = "secret" | "plaintext" | "missing";
