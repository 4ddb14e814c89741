/** What the TopologyCheck reports (its declaration names it as an output; its implementation builds it). */
/** The report as plain JSON (no undefined fields): what the stack outputs carry. */
export interface TopologyCheckReport {
  ok: boolean;
  mode: "cluster" | "replication";
  failures: { code: string; message: string; node?: string }[];
  shards: {
    primary: { address: string; zone: string | null; slotRanges: string[]; slotCount: number; keys: number | null };
    replicas: { address: string; zone: string | null; crossAz: boolean; linkUp: boolean }[];
  }[];
  primariesPerZone: Record<string, number>;
  nodeCount: number;
  /** Replication under Sentinel: the master name asked and every Sentinel's view; absent otherwise. */
  masterName?: string;
  sentinels?: { address: string; zone: string | null; reachable: boolean; agrees: boolean; primary: string | null }[];
}
