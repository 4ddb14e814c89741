/**
 * The topology verifier's entry point: discover the topology from the seeds (replication mode:
 * from the Sentinels when given), look up zones (cluster mode: the zones nodes announce via
 * `availability-zone` first, then the zone source), analyse. Throws ConnectionError
 * (topology/connector.ts) when no seed, or no Sentinel, can be reached. A primary the Sentinels
 * name that cannot be reached is a verdict (PRIMARY_UNREACHABLE), not a thrown error.
 */
import { ConnectionError, type Connector } from "../topology/connector.js";
import { parseEndpoint, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { collectAnnouncedZones, mergeZones } from "./announced-zones.js";
import { analyseCluster } from "./cluster-analysis.js";
import { collectCluster, collectReplication } from "./collect.js";
import { analyseReplication } from "./replication-analysis.js";
import { analyseSentinels, chosenPrimary, collectSentinels } from "./sentinel-analysis.js";
import type { TopologyReport, VerifyOptions } from "./verify-types.js";

/** Why `endpoint` cannot be reached (connect, AUTH and PING), or undefined when it can. */
async function reachError(connector: Connector, endpoint: NodeEndpoint): Promise<string | undefined> {
  try {
    (await connector.connect(endpoint)).disconnect();
    return undefined;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).replace(/^cannot reach [^:]+:\d+: /, "");
  }
}

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
    throw new ConnectionError(
      sentinelCaptures.map((c) => c.address).join(","),
      `no reachable Sentinel knows a primary named ${masterName}`,
    );
  }
  const primary = parseEndpoint(primaryKey);
  const unreachable = await reachError(o.connector, primary);
  if (unreachable !== undefined) {
    const zones = o.zones === undefined ? undefined : await o.zones.zonesFor([primary, ...sentinelEndpoints]);
    const s = analyseSentinels(sentinelCaptures, masterName, zones);
    const flags = [...new Set(sentinelCaptures.map((c) => c.flags).filter((f) => f !== undefined))];
    const seen = flags.length === 0 ? "" : ` (the Sentinels flag it ${flags.join(" / ")})`;
    const failures = [
      {
        code: "PRIMARY_UNREACHABLE" as const,
        message: `the primary the Sentinels name, ${primaryKey}, cannot be reached: ${unreachable}${seen}`,
        node: primaryKey,
      },
      ...s.failures.items,
    ];
    const notes = ["the primary could not be reached: its replicas were not checked"];
    return {
      ok: false,
      mode: "replication",
      failures,
      shards: [],
      primariesPerZone: {},
      nodeCount: 0,
      seed: primaryKey,
      zoneCheck: zones === undefined ? "skipped" : "checked",
      notes,
      masterName,
      sentinels: s.sentinels,
    };
  }
  const seeds = [primary, ...o.seeds.filter((s) => !(s.host === primary.host && s.port === primary.port))];
  const { capture, endpoints } = await collectReplication(o.connector, seeds, countKeys);
  const zones = o.zones === undefined ? undefined : await o.zones.zonesFor([...endpoints, ...sentinelEndpoints]);
  const report = analyseReplication(capture, { zones, expect: o.expect, replicaLagBytes: o.replicaLagBytes });
  const linked = report.shards.flatMap((x) => x.replicas.filter((r) => r.linkUp).map((r) => r.address));
  const s = analyseSentinels(sentinelCaptures, masterName, zones, linked);
  const failures = [...report.failures, ...s.failures.items];
  return { ...report, ok: failures.length === 0, failures, masterName, sentinels: s.sentinels };
}
