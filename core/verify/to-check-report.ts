/** The verifier's in-memory report as the check report (check-report.ts) the stack outputs carry. */
import type { TopologyCheckReport } from "./check-report.js";
import type { TopologyReport } from "./verify-types.js";

/** A replica as the check report and the report page show it: its zone null when unknown. */
export function replicaJson(x: { address: string; zone?: string | null; crossAz: boolean; linkUp: boolean }): {
  address: string;
  zone: string | null;
  crossAz: boolean;
  linkUp: boolean;
} {
  return { address: x.address, zone: x.zone ?? null, crossAz: x.crossAz, linkUp: x.linkUp };
}

/** The verifier's report as a check report: unknowns null, the verifier's diagnostics dropped, JSON-safe. */
export function toCheckReport(r: TopologyReport): TopologyCheckReport {
  const report: TopologyCheckReport = {
    ok: r.ok,
    mode: r.mode,
    failures: r.failures,
    shards: r.shards.map((s) => ({
      primary: {
        address: s.primary.address,
        zone: s.primary.zone ?? null,
        slotRanges: s.primary.slotRanges,
        slotCount: s.primary.slotCount,
        keys: s.primary.keys ?? null,
      },
      replicas: s.replicas.map(replicaJson),
    })),
    primariesPerZone: r.primariesPerZone,
    nodeCount: r.nodeCount,
    ...(r.sentinels === undefined
      ? {}
      : {
          masterName: r.masterName,
          sentinels: r.sentinels.map((x) => ({
            address: x.address,
            zone: x.zone ?? null,
            reachable: x.reachable,
            agrees: x.agrees,
            primary: x.primary ?? null,
          })),
        }),
  };
  // Through JSON, as the stack outputs carry it: fields left undefined (a failure's node) disappear.
  return JSON.parse(JSON.stringify(report)) as TopologyCheckReport;
}
