/**
 * The rules of both modes in a real Prometheus (Debian's 2.42, scraping and evaluating every
 * second) over real exporters: redis_exporter beside every server, and HAProxy's own `/metrics`
 * from the rendered haproxy.cfg, scraped through the deployed scrape job (core/metrics/scrape-config.ts:
 * each target presented as Kubernetes discovery presents a pod, on port 1, so its labels and its
 * scrape address come from the job's relabelling). Each topology first fires no alert for a while (a pending one,
 * from a scrape timing out on a loaded machine, is printed), then takes a fault, and the alerts it
 * must fire are exactly the ones firing; they resolve once the fault is undone.
 *
 * - Replication (2 members and 3 Sentinels through the rendered start script, quorum 2, down-after
 *   2 s): the primary killed; the Sentinels fail over in seconds and only ValkeyPrimaryChanged (info)
 *   fires, on the promoted member: a failover that works is not an outage (ValkeyNoPrimary holds
 *   down-after + 5 s). The old primary restarted (a replica now), two of the three Sentinels killed. The last one's CKQUORUM says NOQUORUM:
 *   ValkeySentinelQuorumLost fires after its 30 s hold; beside it ValkeyWriteEndpointWithoutServer,
 *   because HAProxy's write rule needs a Sentinel majority naming the member (pod/haproxy-cfg.ts),
 *   so the endpoint takes no connection although the primary is healthy.
 * - Cluster (3 × 1, node timeout 2 s): one shard's primary and replica frozen (SIGSTOP). The other
 *   members mark them failed and say cluster_state fail with a third of the slots not ok:
 *   ValkeyClusterStateNotOk and ValkeyClusterSlotsNotOk fire on them; thawed, the shard's primary
 *   serves again and both resolve. Zones: every target carries its member's zone (as discovery
 *   attaches the node's); healthy, ValkeyPrimaryWithoutReplicaInAnotherZone is not even pending; a
 *   second Prometheus over the same exporters, one replica's zone said to be its primary's, has it
 *   pending for that primary only (the join through the replica's real `slave_ip`).
 *
 * Healthy, every live query of the mode's dashboard (core/metrics/dashboard-panels.ts) returns
 * series from the same Prometheus, its variables set to the targets' namespace and release.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type AlertInputs, type AlertMode } from "../../core/metrics/alert-definition.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { exporterTarget, prometheusWithRules } from "../../harness/drill/alert-watch.js";
import type { FiringAlert, RunningPrometheus, ScrapeTarget } from "../../harness/metrics/prometheus.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";
import { panelsFor } from "../../core/metrics/dashboard-panels.js";
import { grafanaToPromql } from "../support/promql.js";

const PASSWORD = "alerts-real-password";
const ZONE_ALERT = "ValkeyPrimaryWithoutReplicaInAnotherZone";
const RELEASE = { namespace: "local", release: "alerts" };

const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

/**
 * An exporter beside host:port, as a scrape target with the deployed labels (and `zone`, as discovery
 * attaches the node's). It listens on the server's own address, as a pod's exporter shares its IP.
 */
async function exporterOf(
  host: string,
  port: number,
  component: string,
  pod: string,
  zone?: string,
): Promise<ScrapeTarget> {
  const labels = { ...RELEASE, component, pod, ...(zone === undefined ? {} : { zone }) };
  const x = await exporterTarget(host, port, PASSWORD, labels, host);
  stops.push(x.stop);
  return x.target;
}

const describeAlerts = (alerts: FiringAlert[]): string =>
  alerts.map((a) => `${a.name} ${a.state} ${a.labels.pod ?? ""}`).join("; ") || "none";
const firingNames = (alerts: FiringAlert[]): string[] =>
  [...new Set(alerts.filter((a) => a.state === "firing").map((a) => a.name))].sort();

/** The rules of `mode` at the local clocks, scraped every second. */
function localInputs(mode: AlertMode, downAfterSeconds: number, nodeTimeoutSeconds: number): AlertInputs {
  return {
    mode,
    maxLagSeconds: defaultValkeyConfig().replication.minReplicasMaxLag,
    downAfterSeconds,
    nodeTimeoutSeconds,
    scrapeIntervalSeconds: 1,
  };
}

/** Prometheus over `targets` with `mode`'s rules, once every target is up and the rules evaluated after (the drills' wait). */
async function prometheusOver(targets: ScrapeTarget[], inputs: AlertInputs): Promise<RunningPrometheus> {
  // The deployed scrape job's relabelling (core/metrics/scrape-config.ts) attaches the labels the rules use.
  const p = await prometheusWithRules(targets, inputs);
  stops.push(p.stop);
  return p;
}

/**
 * The live queries of `mode`'s dashboard (the measured row reads `vbench report --prometheus`'s
 * file, not these targets) that return no series, with the dashboard's variables set to RELEASE.
 */
async function emptyDashboardQueries(p: RunningPrometheus, mode: AlertMode): Promise<string[]> {
  const queries = panelsFor(mode)
    .filter((panel) => panel.row !== "Measured by valkey-on-eks")
    .flatMap((panel) => panel.queries.map((q) => ({ title: panel.title, expr: q.expr })));
  expect(queries.length).toBeGreaterThan(15);
  const empty: string[] = [];
  for (const { title, expr } of queries) {
    const promql = grafanaToPromql(expr, { $__rate_interval: "15s", $__interval: "1s", $__range: "5m" })
      .replaceAll("$namespace", RELEASE.namespace)
      .replaceAll("$release", RELEASE.release);
    if ((await p.query(promql)).length === 0) empty.push(`${title}: ${promql}`);
  }
  return empty;
}

/** Polls for `ms`: the firing alerts seen other than `allowed` (none expected); pending ones are printed. */
async function firedWhileHealthy(p: RunningPrometheus, ms: number, allowed: string[] = []): Promise<string[]> {
  const until = Date.now() + ms;
  const fired: string[] = [];
  while (Date.now() < until) {
    const now = (await p.alerts()).filter((a) => !allowed.includes(a.name));
    if (now.some((a) => a.state === "firing")) fired.push(describeAlerts(now));
    else if (now.length > 0) console.log(`[alerts] healthy, pending only: ${describeAlerts(now)}`);
    await sleep(1000);
  }
  return fired;
}

/** Until exactly `names` fire (nothing else firing); the alerts then, and the time it took. */
async function untilFiring(p: RunningPrometheus, names: string[], timeoutMs: number) {
  const from = Date.now();
  let now: FiringAlert[] = [];
  await pollUntil(
    async () => {
      now = await p.alerts();
      return names.every((n) => firingNames(now).includes(n)) ? true : describeAlerts(now);
    },
    { timeoutMs, intervalMs: 500, what: `${names.join(" and ")} firing` },
  );
  console.log(`[alerts] ${describeAlerts(now)}: firing ${Date.now() - from} ms after the fault`);
  return { alerts: now, afterMs: Date.now() - from };
}

/** Until none of `names` (every alert, when not given) is pending or firing. */
async function untilResolved(p: RunningPrometheus, names: string[] | undefined, timeoutMs: number): Promise<void> {
  const from = Date.now();
  await pollUntil(
    async () => {
      const left = (await p.alerts()).filter((a) => names === undefined || names.includes(a.name));
      return left.length === 0 ? true : describeAlerts(left);
    },
    { timeoutMs, intervalMs: 500, what: `${names?.join(" and ") ?? "every alert"} resolved` },
  );
  console.log(`[alerts] resolved ${Date.now() - from} ms after the fault was undone`);
}

describe("alert rules in a real Prometheus over real exporters", () => {
  it("replication: a healthy topology fires no alert and answers every live dashboard query; a primary killed fires ValkeyPrimaryChanged only (not ValkeyNoPrimary); two Sentinels of three killed fire ValkeySentinelQuorumLost and the write endpoint's alert, resolved once they are back", async () => {
    const t = await SentinelTopology.start({
      replicas: 1,
      zones: ["a", "b"],
      sentinels: 3,
      quorum: 2,
      downAfterMs: 2000,
      failoverTimeoutMs: 6000,
      password: PASSWORD,
      hostBase: 70,
    });
    stops.push(() => t.stopAll());
    const status = t.proxy?.status;
    if (status === undefined) throw new Error("no HAProxy");
    const targets = [
      // Each with its zone, as discovery attaches it (the per-zone panel reads it).
      ...(await Promise.all(t.members.map((m) => exporterOf(m.host, m.port, "valkey", m.name, m.zone)))),
      ...(await Promise.all(t.sentinels.map((s) => exporterOf(s.host, s.port, "sentinel", s.name, s.zone)))),
      {
        address: `${status.host}:${status.port}`,
        path: METRICS_PATH,
        labels: { ...RELEASE, component: "haproxy", pod: "haproxy-0" },
      },
    ];
    const p = await prometheusOver(targets, localInputs("replication", 2, 15));
    expect(await firedWhileHealthy(p, 35_000)).toEqual([]);
    expect(await emptyDashboardQueries(p, "replication")).toEqual([]);

    // The primary killed: the Sentinels fail over in seconds, which is not an outage alert.
    const old = t.member(await t.primaryFromSentinels());
    await killHard(old.proc);
    const failover = await untilFiring(p, ["ValkeyPrimaryChanged"], 30_000);
    const promoted = t.members.find((m) => m !== old);
    expect(firingNames(failover.alerts)).toEqual(["ValkeyPrimaryChanged"]);
    expect(failover.alerts.find((a) => a.name === "ValkeyPrimaryChanged")?.labels).toMatchObject({
      ...RELEASE,
      pod: promoted?.name,
      severity: "info",
    });
    // Longer than ValkeyNoPrimary's hold (down-after + 5 s): still nothing else fires.
    expect(await firedWhileHealthy(p, 10_000, ["ValkeyPrimaryChanged"])).toEqual([]);
    await t.startMember(old.ordinal);

    // Two Sentinels of three killed: no majority for a failover.
    await killHard(t.sentinels[1]?.proc);
    await killHard(t.sentinels[2]?.proc);
    const lost = ["ValkeySentinelQuorumLost", "ValkeyWriteEndpointWithoutServer"];
    const fired = await untilFiring(p, lost, 50_000);
    expect(fired.afterMs).toBeGreaterThanOrEqual(30_000);
    expect(firingNames(fired.alerts)).toEqual(["ValkeyPrimaryChanged", ...lost]);
    expect(fired.alerts.find((a) => a.name === "ValkeySentinelQuorumLost")?.labels).toMatchObject({
      ...RELEASE,
      pod: "sentinel-0",
      severity: "critical",
    });

    await t.startSentinel(1);
    await t.startSentinel(2);
    await untilResolved(p, lost, 30_000);
  }, 300_000);

  it("cluster: members not yet in a formed cluster (a release being deployed, before its bootstrap) report cluster_state fail past the alerts' hold and fire neither cluster alert", async () => {
    const fleet = new LocalFleet();
    stops.push(() => fleet.stopAll());
    const nodes = await fleet.startMany(3, (i) => ({
      name: `unformed-${i + 1}`,
      clusterEnabled: true,
      clusterNodeTimeoutMs: 2000,
      password: PASSWORD,
    }));
    const targets = await Promise.all(nodes.map((n) => exporterOf(n.host, n.port, "valkey", n.name)));
    const p = await prometheusOver(targets, localInputs("cluster", 2, 2));
    // The input the rules read is there: every member's cluster_state is 0, its cluster_size 0.
    expect((await p.query('redis_cluster_state{component="valkey"} == 0')).length).toBe(3);
    expect((await p.query('redis_cluster_size{component="valkey"} == 0')).length).toBe(3);
    // Three times the rules' 7 s hold (node timeout 2 s + 5 s): neither fires, nor pends.
    const seen: string[] = [];
    const until = Date.now() + 21_000;
    while (Date.now() < until) {
      const now = (await p.alerts()).filter((a) => a.name.startsWith("ValkeyCluster"));
      if (now.length > 0) seen.push(describeAlerts(now));
      await sleep(1000);
    }
    expect(seen).toEqual([]);
  }, 120_000);

  it("cluster: a healthy 3 x 1 fires no alert and answers every live dashboard query; a shard frozen fires ValkeyClusterStateNotOk and ValkeyClusterSlotsNotOk on the other members, resolved once it thaws", async () => {
    const fleet = new LocalFleet();
    stops.push(() => fleet.stopAll());
    const c = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["a", "b", "c"],
      password: PASSWORD,
      clusterNodeTimeoutMs: 2000,
      // A maxmemory, as every deployed member has (pod/valkey-conf.ts): the memory panel reads it.
      server: { extra: { maxmemory: "256mb" } },
    });
    const targets = await Promise.all(
      c.nodes.map((n) => exporterOf(n.host, n.port, "valkey", n.name, c.zoneMap[n.address])),
    );
    const inputs = localInputs("cluster", 2, 2);
    const p = await prometheusOver(targets, inputs);
    expect(await firedWhileHealthy(p, 20_000)).toEqual([]);
    // The AZ-aware bootstrap put every replica in another zone than its primary: not even pending.
    expect((await p.alerts()).filter((a) => a.name === ZONE_ALERT)).toEqual([]);
    expect(await emptyDashboardQueries(p, "cluster")).toEqual([]);

    const primary = c.primaries[0];
    const replica = primary === undefined ? undefined : c.replicasOf.get(primary.address)?.[0];
    if (primary === undefined || replica === undefined) throw new Error("no shard with a replica");

    // The same exporters with the replica's zone said to be its primary's: the zone alert pends for that primary only
    // (its 5-minute hold is promtool's to test), matched through the replica's real slave_ip.
    const primaryZone = c.zoneMap[primary.address] as string;
    const sameZone = targets.map((t) =>
      t.labels.pod === replica.name ? { ...t, labels: { ...t.labels, zone: primaryZone } } : t,
    );
    const p2 = await prometheusOver(sameZone, inputs);
    let pending: FiringAlert[] = [];
    await pollUntil(
      async () => {
        const now = await p2.alerts();
        pending = now.filter((a) => a.name === ZONE_ALERT);
        return pending.length > 0 ? true : describeAlerts(now);
      },
      { timeoutMs: 30_000, intervalMs: 500, what: `${ZONE_ALERT} pending with the replica relabelled` },
    );
    expect(pending.map((a) => [a.labels.pod, a.labels.zone])).toEqual([[primary.name, primaryZone]]);
    await p2.stop();
    primary.signal("SIGSTOP");
    replica.signal("SIGSTOP");
    const fired = await untilFiring(p, ["ValkeyClusterStateNotOk", "ValkeyClusterSlotsNotOk"], 45_000);
    expect(firingNames(fired.alerts)).toEqual(["ValkeyClusterSlotsNotOk", "ValkeyClusterStateNotOk"]);
    const pods = new Set(fired.alerts.filter((a) => a.state === "firing").map((a) => a.labels.pod));
    expect(pods.has(primary.name) || pods.has(replica.name)).toBe(false);

    primary.signal("SIGCONT");
    replica.signal("SIGCONT");
    await untilResolved(p, undefined, 60_000);
  }, 300_000);
});
