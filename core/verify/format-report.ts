/** Renders a TopologyReport as the human table the seed's verify-cluster.sh prints. */
import type { ReplicaReport, SentinelReport, TopologyReport } from "./verify-types.js";

const zoneText = (z: string | undefined): string => z ?? "(zone unknown)";

function replicaLine(r: ReplicaReport): string {
  const az = r.zone === undefined ? "cross-AZ ?" : r.crossAz ? "cross-AZ ✓" : "cross-AZ ✗";
  const link = r.linkUp ? "" : "  link DOWN";
  const lag = r.lagBytes === undefined ? "" : `  lag ${r.lagBytes} B`;
  return `  replica ${r.address}  ${zoneText(r.zone)}  ${az}${link}${lag}`;
}

function sentinelLine(s: SentinelReport): string {
  const view = !s.reachable
    ? `UNREACHABLE (${s.error ?? "?"})`
    : s.agrees
      ? `agrees ✓`
      : `names ${s.primary ?? "no primary"} ✗`;
  const quorum = s.ckquorum === undefined ? "" : `  ckquorum: ${s.ckquorum}`;
  const tilt = s.tilt === true ? "  in TILT (its flags frozen until it leaves)" : "";
  return `SENTINEL ${s.address}  ${zoneText(s.zone)}  ${view}${quorum}${tilt}`;
}

export function formatTopologyReport(r: TopologyReport): string {
  const out: string[] = [];
  if (r.mode === "cluster") {
    out.push("=== cluster info ===");
    out.push(`cluster_state:${r.clusterState ?? "?"}`);
    out.push(`cluster_slots_assigned:${r.slotsAssigned ?? "?"}`);
    out.push(`cluster_slots_ok:${r.slotsOk ?? "?"}`);
    out.push(`cluster_known_nodes:${r.nodeCount}`);
    out.push(`cluster_size:${r.shards.filter((s) => s.primary.slotCount > 0).length}`);
  } else {
    out.push("=== replication ===");
    out.push(`seed:${r.seed ?? "?"}  nodes:${r.nodeCount}`);
  }
  out.push("=== Topology + primary↔replica AZ pairing ===");
  for (const s of r.shards) {
    const p = s.primary;
    const slots = r.mode === "cluster" ? `  slots ${p.slotRanges.join(",") || "none"} (${p.slotCount})` : "";
    const keys = p.keys === undefined ? "" : `  keys ${p.keys}`;
    out.push(`PRIMARY ${p.address}  ${zoneText(p.zone)}${slots}${keys}`);
    for (const rep of s.replicas) out.push(replicaLine(rep));
    if (s.replicas.length === 0) out.push("  (no replicas)");
  }
  if (r.sentinels !== undefined) {
    out.push(`=== Sentinels (master name ${r.masterName ?? "?"}) ===`);
    for (const s of r.sentinels) out.push(sentinelLine(s));
  }
  const perZone = Object.entries(r.primariesPerZone).sort(([a], [b]) => a.localeCompare(b));
  if (perZone.length > 0) out.push(`primaries per zone: ${perZone.map(([z, n]) => `${z}=${n}`).join(" ")}`);
  for (const n of r.notes ?? []) out.push(`note: ${n}`);
  if (r.ok) {
    const what =
      r.mode === "cluster"
        ? `cluster_state=ok, all ${r.slotsAssigned ?? "?"} slots assigned and ok`
        : `primary ${r.seed ?? "?"} with ${r.shards[0]?.replicas.length ?? 0} linked replica(s)`;
    const az =
      r.zoneCheck === "skipped"
        ? "zone checks skipped (no zone source)"
        : "every primary has a linked replica in another zone";
    out.push(`VERIFY: PASS — ${what}, ${az}.`);
  } else {
    out.push(`VERIFY: FAIL — ${r.failures.length} problem(s):`);
    for (const f of r.failures) out.push(`  ${f.code}: ${f.message}`);
  }
  return out.join("\n");
}
