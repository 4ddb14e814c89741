/**
 * The alert rules name only metrics the real exporters emit. redis_exporter (Debian's 1.45, as
 * .ci/setup installs it) runs beside real servers of both modes: the members and the Sentinel of a
 * replication topology started by the rendered start script, and a 3 × 1 cluster; every metric a
 * mode's rules select for component `valkey` must be in the union of that mode's member scrapes
 * (primary and replica: replica-only metrics like redis_master_link_up come from the replica),
 * every one for `sentinel` in the Sentinel's scrape, every one for `haproxy` in the `/metrics` of
 * HAProxy running the rendered haproxy.cfg (Debian's HAProxy 2.6, its built-in exporter). The same
 * for every metric the mode's dashboard selects (its queries read with Prometheus's own grammar).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertInputs } from "../../core/metrics/alert-definition.js";
import { metricsByComponent, ruleGroups } from "../../core/metrics/rule-file.js";
import { parseStackConfig } from "../../config/schema.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { metricNames, startExporter, type RunningExporter } from "../../harness/metrics/exporter.js";
import { panelsFor } from "../../core/metrics/dashboard-panels.js";
import { grafanaToPromql, metricsPerComponent } from "../support/promql.js";

const PASSWORD = "exporter-metrics-password";
let topology: SentinelTopology | undefined;
const fleet = new LocalFleet();
const exporters: RunningExporter[] = [];

afterAll(async () => {
  await Promise.all(exporters.map((e) => e.stop()));
  await topology?.stopAll();
  await fleet.stopAll();
});

/** The names one exporter of host:port emits, its exporter kept for the teardown. */
async function scrape(host: string, port: number): Promise<Set<string>> {
  const e = await startExporter({ host, port, password: PASSWORD });
  exporters.push(e);
  return metricNames(await (await fetch(e.url)).text());
}

const union = (sets: Set<string>[]): Set<string> => new Set(sets.flatMap((s) => [...s]));
const missing = (wanted: Set<string> | undefined, got: Set<string>): string[] =>
  [...(wanted ?? [])].filter((m) => !got.has(m)).sort();

describe("alert rules against a real redis_exporter", () => {
  let replication: { valkey: Set<string>; sentinel: Set<string>; haproxy: Set<string> };
  let cluster: Set<string>;

  beforeAll(async () => {
    topology = await SentinelTopology.start({
      replicas: 1,
      zones: ["a"],
      sentinels: 1,
      quorum: 1,
      password: PASSWORD,
      hostBase: 100,
    });
    const members = await Promise.all(topology.members.map((m) => scrape(m.host, m.port)));
    const sentinel = topology.sentinels[0];
    if (sentinel === undefined) throw new Error("no Sentinel");
    const status = topology.proxy?.status;
    if (status === undefined) throw new Error("no HAProxy");
    const haproxy = metricNames(await (await fetch(`http://${status.host}:${status.port}${METRICS_PATH}`)).text());
    replication = { valkey: union(members), sentinel: await scrape(sentinel.host, sentinel.port), haproxy };
    const c = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["a", "b", "c"],
      password: PASSWORD,
    });
    const replica = [...c.replicasOf.values()].flat()[0];
    const primary = c.primaries[0];
    if (replica === undefined || primary === undefined) throw new Error("the cluster has no replica");
    cluster = union(await Promise.all([primary, replica].map((p) => scrape(p.host, p.port))));
  }, 180_000);

  it("replication: every metric the rules select for members, Sentinels and HAProxy is emitted", () => {
    const wanted = metricsByComponent(
      ruleGroups(alertInputs(parseStackConfig({ valkey: { mode: "replication" } }).config.valkey)),
    );
    expect(wanted.get("valkey")?.size).toBeGreaterThan(5);
    expect(wanted.get("sentinel")?.size).toBeGreaterThan(2);
    expect(missing(wanted.get("valkey"), replication.valkey)).toEqual([]);
    expect(missing(wanted.get("sentinel"), replication.sentinel)).toEqual([]);
    expect(wanted.get("haproxy")).toContain("haproxy_backend_active_servers");
    expect(missing(wanted.get("haproxy"), replication.haproxy)).toEqual([]);
  });

  it("cluster: every metric the rules select for members is emitted", () => {
    const wanted = metricsByComponent(
      ruleGroups(alertInputs(parseStackConfig({ valkey: { mode: "cluster" } }).config.valkey)),
    );
    expect(wanted.get("valkey")).toContain("redis_cluster_state");
    expect(missing(wanted.get("valkey"), cluster)).toEqual([]);
  });

  /** The metrics `mode`'s dashboard selects, per component. */
  const dashboardWants = (mode: "replication" | "cluster") =>
    metricsPerComponent(panelsFor(mode).flatMap((p) => p.queries.map((q) => grafanaToPromql(q.expr))));

  it("replication: every metric the dashboard selects for members, Sentinels and HAProxy is emitted", () => {
    const wanted = dashboardWants("replication");
    expect(wanted.get("valkey")?.size).toBeGreaterThan(15);
    expect(missing(wanted.get("valkey"), replication.valkey)).toEqual([]);
    expect(wanted.get("sentinel")?.size).toBeGreaterThan(2);
    expect(missing(wanted.get("sentinel"), replication.sentinel)).toEqual([]);
    expect(missing(wanted.get("haproxy"), replication.haproxy)).toEqual([]);
  });

  it("cluster: every metric the dashboard selects for members is emitted", () => {
    const wanted = dashboardWants("cluster");
    expect(wanted.get("valkey")).toContain("redis_cluster_slots_ok");
    expect(missing(wanted.get("valkey"), cluster)).toEqual([]);
  });

  it("the scrapes are not vacuous: a name no exporter emits is reported missing", () => {
    expect(missing(new Set(["redis_up", "redis_no_such_metric"]), replication.valkey)).toEqual([
      "redis_no_such_metric",
    ]);
  });
});
