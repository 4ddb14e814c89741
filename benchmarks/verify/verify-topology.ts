/**
 * The topology verifier's entry point: discover the topology from the seeds, look up zones
 * (cluster mode: the zones nodes announce via `availability-zone` first, then the zone source),
 * analyse. Throws ConnectionError (topology/connector.ts) when no seed can be reached.
 */
import { collectAnnouncedZones, mergeZones } from "./announced-zones.js";
import { analyseCluster } from "./cluster-analysis.js";
import { collectCluster, collectReplication } from "./collect.js";
import { analyseReplication } from "./replication-analysis.js";
import type { TopologyReport, VerifyOptions } from "./verify-types.js";

export async function verifyTopology(o: VerifyOptions): Promise<TopologyReport> {
  const countKeys = o.countKeys ?? true;
  if (o.mode === "cluster") {
    const { capture, endpoints } = await collectCluster(o.connector, o.seeds, countKeys);
    const fromSource = o.zones === undefined ? undefined : await o.zones.zonesFor(endpoints);
    const zones = mergeZones(await collectAnnouncedZones(o.connector, o.seeds), fromSource);
    return analyseCluster(capture, { zones, expect: o.expect });
  }
  const { capture, endpoints } = await collectReplication(o.connector, o.seeds, countKeys);
  const zones = o.zones === undefined ? undefined : await o.zones.zonesFor(endpoints);
  return analyseReplication(capture, { zones, expect: o.expect, replicaLagBytes: o.replicaLagBytes });
}
