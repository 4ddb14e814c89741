/** What the ClusterBootstrap reports (its declaration names it as an output; its implementation builds it). */
export interface ShardSummary {
  primary: { pod: string; zone: string | null; nodeId: string | null };
  replicas: { pod: string; zone: string | null }[];
  /** e.g. ["0-5460"]. */
  slotRanges: string[];
}

export interface PlanSummary {
  shards: ShardSummary[];
  primariesPerZone: Record<string, number>;
}
