/**
 * The config types, every one inferred from the schema: the stack-file sections (sections.ts)
 * and the resolver piped after them (resolve.ts). Nothing here is written by hand, so the types
 * cannot drift from what parsing produces; keys, defaults and descriptions live on the schema
 * (and in README's table rendered from it by `npx tsx config/render-table.ts --write`).
 */
import type { z } from "zod";
import type { stackResolver } from "./resolve.js";
import type { passwordStateSchema, stackInputSchema } from "./sections.js";

/** A stack's config as written (every key optional where the schema has a default). */
export type StackConfigInput = z.input<typeof stackInputSchema>;
/** The stack input after per-key validation and static defaults, before resolution. */
export type { StackInput } from "./sections.js";

/**
 * A stack's whole resolved configuration: every default filled in (including those that depend
 * on other keys), every quantity kept as written and parsed. The Valkey password is never part of it.
 */
export type StackConfig = z.output<typeof stackResolver>;

/** Whether the stack carries a Valkey password, without its value. */
export type PasswordState = z.output<typeof passwordStateSchema>;

/** Where Valkey runs: a new EKS cluster with Karpenter, or a Kubernetes cluster you bring. */
export type Platform = StackConfig["platform"];
/** `aws`: region and availability zones (both always resolved). */
export type AwsConfig = StackConfig["aws"];
/** `eks`: the EKS cluster (platform eks only). */
export type EksConfig = StackConfig["eks"];
/** `network`: the VPC's NAT gateways (platform eks). */
export type NetworkConfig = StackConfig["network"];
/** `karpenter`: the Karpenter install and the Valkey data NodePool. */
export type KarpenterConfig = StackConfig["karpenter"];
/** `karpenter.nodePool.limits`, both as written and parsed (`amounts`). */
export type NodePoolLimits = KarpenterConfig["nodePool"]["limits"];
/** `byo`: your own Kubernetes cluster (platform byo only). */
export type ByoConfig = StackConfig["byo"];
/** One Kubernetes toleration. */
export type Toleration = ByoConfig["tolerations"][number];
/** `valkey`: the Valkey deployment. */
export type ValkeyConfig = StackConfig["valkey"];
/** Valkey topology: one primary + N replicas, or P primaries × M replicas over 16384 slots. */
export type ValkeyMode = ValkeyConfig["mode"];
/** Valkey `appendfsync`. */
export type AppendFsync = ValkeyConfig["persistence"]["appendfsync"];
/** Valkey `maxmemory-policy`. */
export type MaxmemoryPolicy = ValkeyConfig["maxmemoryPolicy"];
/** `benchmark`: the valkey-benchmark run (the workload fields are vocabulary/workload.ts's). */
export type BenchmarkConfig = StackConfig["benchmark"];
/** `checks`: post-deploy steps. */
export type ChecksConfig = StackConfig["checks"];
/** How post-deploy checks reach the Valkey pods. */
export type CheckConnector = ChecksConfig["connector"];
/** CPU and memory as written in the stack file, ready for a Kubernetes manifest. */
export type ResourceQuantities = BenchmarkConfig["resources"];
/** The same CPU and memory, parsed: CPU millicores and memory bytes. */
export type ResourceAmounts = BenchmarkConfig["resourceAmounts"];
/** `drills`: failure drills in the deployed stack. */
export type DrillsConfig = StackConfig["drills"];
/** `backup`: scheduled snapshots of every shard to S3. */
export type BackupConfig = StackConfig["backup"];
/** `restore`: start a new stack from a backup. */
export type RestoreConfig = StackConfig["restore"];

/** `cost`: how the cost estimate prices data transfer. */
export type CostConfig = StackConfig["cost"];
/** `metrics`: the exporters, scrape annotations and who may scrape. */
export type MetricsConfig = StackConfig["metrics"];
