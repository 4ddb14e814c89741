/**
 * The topology verifier's entry point: discover the topology from the seeds (replication mode:
 * from the Sentinels when given), look up zones (cluster mode: the zones nodes announce via
 * `availability-zone` first, then the zone source), analyse. Throws ConnectionError
 * (topology/connector.ts) when no seed, or no Sentinel, can be reached.
 */
import { ConnectionError } from "../topology/connector.js";
import { parseEndpoint } from "../topology/endpoint.js";
import { collectAnnouncedZones, mergeZones } from "./announced-zones.js";
import { analyseCluster } from "./cluster-analysis.js";
import { collectCluster, collectReplication } from "./collect.js";
import { analyseReplication } from "./replication-analysis.js";
import { analyseSentinels, chosenPrimary, collectSentinels } from "./sentinel-analysis.js";
import type { TopologyReport, VerifyOptions } from "./verify-types.js";

export async function verifyTopology(o: VerifyOptions): Promise<TopologyReport> {
  const countKeys = o.countKeys ?? true;
  if (o.mode === "cluster") {
    const { capture, endpoints } = await collectCluster(o.connector, o.seeds, countKeys);
    const fromSource = o.zones === undefined ? undefined : await o.zones.zonesFor(endpoints);
    const zones = mergeZones(await collectAnnouncedZones(o.connector, o.seeds), fromSource);
    return analyseCluster(capture, { zones, expect: o.expect });
  }
  if (o.sentinel === undefined) {
    const { capture, endpoints } = await collectReplication(o.connector, o.seeds, countKeys);
    const zones = o.zones === undefined ? undefined : await o.zones.zonesFor(endpoints);
    return analyseReplication(capture, { zones, expect: o.expect, replicaLagBytes: o.replicaLagBytes });
  }
  const { endpoints: sentinelEndpoints, masterName, connector } = o.sentinel;
  const sentinelCaptures = await collectSentinels(connector, sentinelEndpoints, masterName);
  const primaryKey = chosenPrimary(sentinelCaptures);
  if (primaryKey === undefined) {
    throw new ConnectionError(sentinelCaptures.map((c) => c.address).join(","), `no reachable Sentinel knows a primary named ${masterName}`);
  }
  const primary = parseEndpoint(primaryKey);
  const seeds = [primary, ...o.seeds.filter((s) => !(s.host === primary.host && s.port === primary.port))];
  const { capture, endpoints } = await collectReplication(o.connector, seeds, countKeys);
  const zones = o.zones === undefined ? undefined : await o.zones.zonesFor([...endpoints, ...sentinelEndpoints]);
  const report = analyseReplication(capture, { zones, expect: o.expect, replicaLagBytes: o.replicaLagBytes });
  const s = analyseSentinels(sentinelCaptures, masterName, zones);
  const failures = [...report.failures, ...s.failures.items];
  return { ...report, ok: failures.length === 0, failures, masterName, sentinels: s.sentinels };
}
