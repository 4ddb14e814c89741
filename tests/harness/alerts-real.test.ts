/**
 * The replication rules in a real Prometheus (Debian's 2.42) scraping real exporters: redis_exporter
 * beside each member and Sentinel of a topology started by the rendered start script (2 members,
 * 3 Sentinels, quorum 2, down-after 2 s) and HAProxy's own `/metrics` from the rendered
 * haproxy.cfg, scraped and evaluated every second. A healthy topology fires no alert for 35 s
 * (longer than every hold time but the 60 s of ValkeyServerDown; a pending one is printed). Then two of the
 * three Sentinels are killed: the last one's CKQUORUM says NOQUORUM, and ValkeySentinelQuorumLost
 * must fire after its 30 s hold (within 30 s + 20 s of scrape and evaluation slack). Beside it
 * exactly one other alert fires, ValkeyWriteEndpointWithoutServer: HAProxy's write rule needs a
 * Sentinel majority naming the member (pod/haproxy-cfg.ts), so without one the write endpoint takes
 * no connection although the primary is healthy; the alert says so. The Sentinels restarted, both
 * resolve.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type AlertInputs } from "../../core/metrics/alert-definition.js";
import { ruleFileText, ruleGroups } from "../../core/metrics/rule-file.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { startExporter, type RunningExporter } from "../../harness/metrics/exporter.js";
import { startPrometheus, type RunningPrometheus, type ScrapeTarget } from "../../harness/metrics/prometheus.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";

const PASSWORD = "alerts-real-password";
const DOWN_AFTER_MS = 2000;
const RELEASE = { namespace: "local", release: "alerts" };

let t: SentinelTopology | undefined;
let prometheus: RunningPrometheus | undefined;
const exporters: RunningExporter[] = [];
afterAll(async () => {
  await prometheus?.stop();
  await Promise.all(exporters.map((e) => e.stop()));
  await t?.stopAll();
});

/** An exporter beside host:port, as a scrape target with the deployed labels. */
async function exporterTarget(host: string, port: number, component: string, pod: string): Promise<ScrapeTarget> {
  const e = await startExporter({ host, port, password: PASSWORD });
  exporters.push(e);
  return { address: new URL(e.url).host, labels: { ...RELEASE, component, pod } };
}

const describeAlerts = (alerts: Array<{ name: string; state: string; labels: Record<string, string> }>): string =>
  alerts.map((a) => `${a.name} ${a.state} ${a.labels.pod ?? ""}`).join("; ") || "none";

describe("replication alert rules in a real Prometheus over real exporters", () => {
  it("a healthy topology fires no alert; two Sentinels of three killed fire ValkeySentinelQuorumLost and the write endpoint's alert, both resolved once they are back", async () => {
    t = await SentinelTopology.start({
      replicas: 1,
      zones: ["a"],
      sentinels: 3,
      quorum: 2,
      downAfterMs: DOWN_AFTER_MS,
      failoverTimeoutMs: 6000,
      password: PASSWORD,
      hostBase: 70,
    });
    const topology = t;
    const targets = [
      ...(await Promise.all(topology.members.map((m) => exporterTarget(m.host, m.port, "valkey", m.name)))),
      ...(await Promise.all(topology.sentinels.map((s) => exporterTarget(s.host, s.port, "sentinel", s.name)))),
    ];
    const status = topology.proxy?.status;
    if (status === undefined) throw new Error("no HAProxy");
    targets.push({
      address: `${status.host}:${status.port}`,
      path: METRICS_PATH,
      labels: { ...RELEASE, component: "haproxy", pod: "haproxy-0" },
    });
    const valkey = defaultValkeyConfig();
    const inputs: AlertInputs = {
      mode: "replication",
      maxLagSeconds: valkey.replication.minReplicasMaxLag,
      downAfterSeconds: Math.ceil(DOWN_AFTER_MS / 1000),
      nodeTimeoutSeconds: Math.ceil(valkey.cluster.nodeTimeoutMs / 1000),
      scrapeIntervalSeconds: 1,
    };
    prometheus = await startPrometheus(targets, ruleFileText(ruleGroups(inputs)));
    const p = prometheus;
    await pollUntil(
      async () => {
        const health = await p.targets();
        const down = Object.entries(health).filter(([, h]) => h !== "up");
        return Object.keys(health).length === targets.length && down.length === 0 ? true : JSON.stringify(health);
      },
      { timeoutMs: 30_000, intervalMs: 500, what: "every target up in Prometheus" },
    );

    // Healthy: nothing firing for 35 s. A pending alert is printed, not failed: a scrape that
    // times out on a loaded machine leaves a target's series stale for an interval, which the
    // hold times (at least two intervals) absorb.
    const healthyUntil = Date.now() + 35_000;
    const fired: string[] = [];
    while (Date.now() < healthyUntil) {
      const now = await p.alerts();
      if (now.some((a) => a.state === "firing")) fired.push(describeAlerts(now));
      else if (now.length > 0) console.log(`[alerts] healthy, pending only: ${describeAlerts(now)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(fired).toEqual([]);

    // Two Sentinels of three killed: no majority for a failover.
    const killedAt = Date.now();
    await killHard(topology.sentinels[1]?.proc);
    await killHard(topology.sentinels[2]?.proc);
    let firing: Awaited<ReturnType<RunningPrometheus["alerts"]>> = [];
    await pollUntil(
      async () => {
        firing = (await p.alerts()).filter((a) => a.state === "firing");
        const names = new Set(firing.map((a) => a.name));
        return names.has("ValkeySentinelQuorumLost") && names.has("ValkeyWriteEndpointWithoutServer")
          ? true
          : describeAlerts(firing);
      },
      {
        timeoutMs: 50_000,
        intervalMs: 500,
        what: "ValkeySentinelQuorumLost and ValkeyWriteEndpointWithoutServer firing",
      },
    );
    const firedAfterMs = Date.now() - killedAt;
    console.log(`[alerts] ${describeAlerts(firing)}: both firing ${firedAfterMs} ms after the kill`);
    expect(firedAfterMs).toBeGreaterThanOrEqual(30_000);
    expect([...new Set(firing.map((a) => a.name))].sort()).toEqual([
      "ValkeySentinelQuorumLost",
      "ValkeyWriteEndpointWithoutServer",
    ]);
    expect(firing.find((a) => a.name === "ValkeySentinelQuorumLost")?.labels).toMatchObject({
      ...RELEASE,
      pod: "sentinel-0",
      severity: "critical",
    });

    // Back: it resolves.
    await topology.startSentinel(1);
    await topology.startSentinel(2);
    const backAt = Date.now();
    await pollUntil(
      async () => {
        const now = await p.alerts();
        return now.length > 0 ? describeAlerts(now) : true;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: "every alert resolved" },
    );
    console.log(`[alerts] resolved ${Date.now() - backAt} ms after the Sentinels were back`);
  }, 300_000);
});
