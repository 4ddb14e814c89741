/**
 * The topology verifier's public types: what it checks (stable failure codes), what it
 * reports, and how it is asked. Codes are stable strings other tools match on.
 */
import type { Connector } from "../topology/connector.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { ZoneSource } from "../topology/zones.js";
import type { CheckFailure, CheckPrimary, CheckReplica, CheckSentinel, TopologyCheckReport } from "./check-report.js";

export type ClusterFailureCode =
  | "CLUSTER_MODE_DISABLED"
  | "CLUSTER_STATE_NOT_OK"
  | "SLOTS_UNASSIGNED"
  | "SLOTS_NOT_OK"
  | "NODE_FAILED"
  | "PRIMARY_WITHOUT_REPLICA"
  | "NO_CROSS_AZ_REPLICA"
  | "AZ_PRIMARY_MAJORITY"
  | "ZONE_UNKNOWN"
  | "SHAPE_MISMATCH";

export type ReplicationFailureCode =
  | "NOT_PRIMARY"
  | "NO_REPLICAS"
  | "REPLICA_LINK_DOWN"
  | "REPLICA_COUNT"
  | "REPLICA_LAG"
  | "NO_CROSS_AZ_REPLICA"
  | "ZONE_UNKNOWN";

/** Replication mode with --sentinel. */
export type SentinelFailureCode =
  | "PRIMARY_UNREACHABLE"
  | "SENTINEL_QUORUM"
  | "SENTINEL_DISAGREE"
  | "SENTINEL_REPLICA_DOWN"
  | "SENTINEL_REPLICA_PRIORITY"
  | "SENTINEL_SAME_ZONE";

export type FailureCode = ClusterFailureCode | ReplicationFailureCode | SentinelFailureCode;

/** A check-report part (check-report.ts) as the verifier holds it: what it did not learn undefined rather than null. */
type InMemory<T> = { [K in keyof T]: null extends T[K] ? Exclude<T[K], null> | undefined : T[K] };

/**
 * The verifier's report and its parts: the check report's fields (check-report.ts, the JSON form
 * the stack outputs carry) with undefined for what the verifier did not learn, the failure codes
 * typed, and the diagnostics the check report leaves out.
 */
export interface VerifyFailure extends CheckFailure {
  code: FailureCode;
}

export interface ReplicaReport extends InMemory<CheckReplica> {
  /** Primary's replication offset minus this replica's, when both are known. */
  lagBytes?: number;
  nodeId?: string;
}

/** One Sentinel as the verifier saw it. */
export interface SentinelReport extends Omit<InMemory<CheckSentinel>, "primary"> {
  /** The primary it names (`host:port`); undefined when unreachable or it knows none. */
  primary?: string;
  /** `quorum` from SENTINEL MASTER. */
  quorum?: number;
  /** SENTINEL CKQUORUM reply (or its error). */
  ckquorum?: string;
  error?: string;
  /** In TILT (`sentinel_tilt:1`): for 30 s after its timer ran late it changes no flag (its view is that old). */
  tilt?: boolean;
}

export interface ShardReport {
  primary: InMemory<CheckPrimary> & { nodeId?: string };
  replicas: ReplicaReport[];
}

export interface TopologyReport extends Pick<
  TopologyCheckReport,
  "ok" | "mode" | "primariesPerZone" | "nodeCount" | "masterName"
> {
  failures: VerifyFailure[];
  shards: ShardReport[];
  clusterState?: string;
  slotsAssigned?: number;
  slotsOk?: number;
  /** The seed the topology was discovered from (`host:port` as given). */
  seed?: string;
  /** "skipped" when no zone source was given: zone checks were not run (not a failure). */
  zoneCheck?: "checked" | "skipped";
  /** Informational observations that are not failures (skipped checks, view disagreements). */
  notes?: string[];
  /** Replication mode with --sentinel: every Sentinel's view (the master name asked is `masterName`). */
  sentinels?: SentinelReport[];
}

export interface VerifyExpectations {
  primaries?: number;
  replicasPerPrimary?: number;
  /** Replication mode: replicas of the primary. Cluster mode: replicas in total. */
  replicas?: number;
}

export interface VerifyOptions {
  mode: "cluster" | "replication";
  seeds: NodeEndpoint[];
  connector: Connector;
  zones?: ZoneSource;
  expect?: VerifyExpectations;
  /** Replication mode: largest acceptable primary-minus-replica offset. @default 1 MiB */
  replicaLagBytes?: number;
  /** DBSIZE per primary. @default true */
  countKeys?: boolean;
  /**
   * Replication mode: discover the primary from these Sentinels (any reachable one) and check
   * the Sentinels themselves; `seeds` may then be empty (extra seeds keep their meaning).
   */
  sentinel?: SentinelOptions;
}

export interface SentinelOptions {
  endpoints: NodeEndpoint[];
  masterName: string;
  /** Reaches the Sentinels (their password may differ from the data nodes'). */
  connector: Connector;
}

export const DEFAULT_REPLICA_LAG_BYTES = 1024 * 1024;
