/**
 * The byo stack in both modes on the local real cluster (kube:local): the real Pulumi engine
 * deploys it, and the pods run from the locally built images (valkey; HAProxy in replication
 * mode, through valkey.replication.haproxyImage) through the real start scripts,
 * become Ready through the real readiness probe on local-path volumes, and the cluster bootstrap and
 * the topology check run inside `up` through the port-forward connector (API server -> kubelet ->
 * containerd), with zones from the real nodes. The same `up` runs the benchmark Job and then the
 * failure drills (support/drill-checks.ts) in real pods, all on the `valkey-previous` image. A
 * second `up` upgrades to the `valkey` image under a write load (support/upgrade-checks.ts: the
 * RollingRestart step's order, nothing acknowledged lost), a live directive is set without a
 * restart (replication: then the benchmark Job runs a mix in the node image, support/mix-checks.ts),
 * one more `up` changes nothing, and `destroy` leaves no pod, PVC or PV. Before the upgrade, the metrics:
 * every exporter and HAProxy scraped from `metrics.scrapeFrom` only (support/metrics-checks.ts), and a real
 * Prometheus there from before the first `up` (support/prometheus-on-pods.ts): targets up, every live dashboard query
 * answered, each drill's alerts read from its history (support/live-metrics-checks.ts), quiet for 3 minutes at the end. Cluster mode's mix (open
 * loop) and its scaling 3 x 1 -> 4 x 1 -> 3 x 1 under load (support/scale-checks.ts) run on a second
 * release once the others have ended. Per mode, a backup to an S3-compatible server, destroy, and
 * its restore into a new stack (support/backup-checks.ts, restore-checks.ts): the replication one
 * beside the lifecycles, the cluster one beside the second release. Needs root, `install.sh` (Pulumi) and
 * `install.sh --real-cluster`. Starts the
 * cluster when none runs.
 */
import { describe, expect, it } from "vitest";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import {
  CLIENT_CPU_CSV_COLUMNS,
  parseResultsCsv,
  RESULTS_CSV_COLUMNS,
  SPREAD_CSV_COLUMNS,
  TRANSFER_CSV_COLUMNS,
} from "../../benchmarks/run/results-csv.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL } from "../../components/shared.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import { DRILL_LOAD_LABEL } from "../../components/steps/failure-drill/load-job.js";
import { createStack, tail, upWithSlowestSteps } from "../e2e/support/pulumi-harness.js";
import {
  PODS_PLAN,
  podsSkipReason,
  podsStackConfig,
  scrapeNamespace,
  STACK_ZONES,
  usePodsCluster,
} from "./support/byo-on-pods.js";
import { parseStackConfig } from "../../config/schema.js";
import { collectByoPreflight, probeByoCluster } from "../../stacks/byo-preflight.js";
import { withNetworkEvidence } from "./support/network-evidence.js";
import {
  detectionSettings,
  drillConfig,
  expectExecStatus,
  expectDrills,
  expectHeldFaults,
  type DrillRow,
} from "./support/drill-checks.js";
import { explainSlowSwitchover } from "./support/prestop-logs.js";
import { explainFailedDrills } from "./support/pod-logs.js";

const HELD_FAULTS = ["freeze", "partition"] as const;
import { allowBusFrom, probe, type ProbeTarget } from "./support/probe.js";
import { expectBackupOnRealPods } from "./support/backup-checks.js";
import { expectScaleUpThenIn } from "./support/scale-checks.js";
import { expectLiveConfigChange, expectUpgradeUnderLoad } from "./support/upgrade-checks.js";
import { drillInputs } from "./support/write-load.js";
import { expectMixOnRealPods } from "./support/mix-checks.js";
import { expectMetricsOnRealPods, freshNamespace } from "./support/metrics-checks.js";
import { POD_PROMETHEUS_SCRAPE_S, startPrometheusOnPods } from "./support/prometheus-on-pods.js";
import { expectLiveMetricsOnRealPods, expectQuiet } from "./support/live-metrics-checks.js";
import { alertInputs, DEFAULT_SCRAPE_INTERVAL_SECONDS } from "../../core/metrics/alert-definition.js";
import { ruleFileText, ruleGroups } from "../../core/metrics/rule-file.js";

const reason = podsSkipReason({ pulumi: true });
const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-secret`;
const TESTS = ["set", "get", "incr"] as const;

describe.skipIf(reason !== "")(`byo stack on real pods${reason ? ` (skipped: ${reason})` : ""}`, () => {
  const ctx = usePodsCluster();

  const lifecycle = async (mode: "cluster" | "replication"): Promise<void> => {
    const NS = `valkey-${mode}-pods`;
    const { cluster, api, env, clientNode } = ctx;
    const zones = STACK_ZONES;
    const config = podsStackConfig(cluster, mode, NS, {
      // The benchmark Job in a real pod, through its own and the release's NetworkPolicies (which
      // the stack always creates): a short seed workload, re-run once if under a second. Its keys
      // fit these pods' maxmemory (96 MiB): with the default 1,000,000 key names of 256 B, the
      // re-runs' growing request counts (35-98 thousand per run on CI) filled it and the Job failed
      // with OOM (noeviction) in one CI run of 2026-11-29.
      benchmark: {
        enabled: true,
        requests: 20_000,
        clients: 10,
        keyspaceLength: 20_000,
        tests: [...TESTS],
        minDurationSeconds: 1,
        resources: { cpu: "500m", memory: "256Mi" },
      },
      // Then the failure drills (support/drill-checks.ts), their load a real Job too.
      drills: drillConfig(cluster),
    });
    // The first up runs the previous server; the second upgrades it (support/upgrade-checks.ts).
    const previous = cluster.images["valkey-previous"];
    if (previous === undefined)
      throw new Error(
        "no valkey-previous image in the running local cluster: restart it (npm run kube:local -- down, then up) to import the images",
      );
    const valkey = { ...detectionSettings(mode, config.valkey as Record<string, unknown>), image: previous };
    // What the program's byo preflight reads of this real cluster (stacks/byo-preflight.ts): nothing to refuse.
    const parsed = parseStackConfig({ ...config, valkey }).config;
    const preflight = collectByoPreflight(parsed, await probeByoCluster(parsed));
    console.log(`[pods] ${mode}: byo preflight ${JSON.stringify(preflight)}`);
    expect(preflight.problems).toEqual([]);
    // A real Prometheus in the scrape namespace from before the first up, with the mode's rules
    // (support/prometheus-on-pods.ts): what it saw of the drills is read after the up.
    const scrapeNs = scrapeNamespace(NS);
    await freshNamespace(api, scrapeNs);
    const inputs = alertInputs(parsed.valkey, POD_PROMETHEUS_SCRAPE_S);
    const prom = await startPrometheusOnPods({
      api,
      cluster,
      ns: NS,
      scrapeNs,
      node: clientNode,
      rules: ruleFileText(ruleGroups(inputs)),
    });
    // The drill step reads each drill's alerts from it (drills.alertsFrom, through a port-forward).
    const drills = { ...(config.drills as Record<string, unknown>), alertsFrom: prom.url };
    const s = await createStack(env, { ...config, valkey, drills }, { password: PASSWORD });
    try {
      const t0 = Date.now();
      const { up: first, slowest } = await withNetworkEvidence(api, PODS_PLAN, NS, () => upWithSlowestSteps(s));
      console.log(
        `[pods] ${mode}: first up (deploy, bootstrap, check, benchmark, drills) ${Math.round((Date.now() - t0) / 1000)} s; slowest steps: ${slowest}`,
      );
      const t1 = Date.now();
      expect(first.summary.result, tail(s.log)).toBe("succeeded");
      const report = first.outputs.report?.value as {
        topology: {
          ok: boolean;
          primaries: Array<{
            address: string;
            zone: string;
            slotRanges: string[];
            replicas: Array<{ zone: string; crossAz: boolean }>;
          }>;
        } | null;
        sentinels?: Array<{ zone: string; reachable: boolean; agrees: boolean }> | null;
        benchmark: { rows: ResultRow[]; csv: string } | null;
        endpoints: { write: string; port: number };
        drills: DrillRow[] | null;
        drillsCsv: string | null;
        metrics: { rules: string } | null;
      };
      expect(report.topology?.ok, tail(s.log)).toBe(true);
      // The benchmark Job ran in a real pod through the NetworkPolicies (replication: to HAProxy's
      // write Service), and its log became the outputs: one row per test, rps > 0, the seed's CSV.
      const rows = report.benchmark?.rows ?? [];
      expect(
        rows.map((r) => [r.mode, r.test]),
        tail(s.log),
      ).toEqual(TESTS.map((t) => [mode, t.toUpperCase()]));
      for (const r of rows) {
        expect(r.rps).toBeGreaterThan(0);
        expect(r.p50_ms).toBeGreaterThan(0);
        expect([r.clients, r.pipeline, r.datasize]).toEqual([10, 16, 256]);
      }
      // Every figure with its spread (benchmark.repeat: 3 rounds), the client's CPU in the pod; the
      // transfer columns are there and empty (valkey-benchmark's Job reads no member's bytes).
      for (const r of rows) {
        expect([r.runs, r.rps_min !== undefined && r.rps_min <= r.rps && r.rps <= (r.rps_max ?? 0)], r.test).toEqual([
          3,
          true,
        ]);
        expect(r.client_cpu_pct, r.test).toBeGreaterThan(0);
        expect(r.cross_zone_bytes_per_s ?? null, r.test).toBeNull();
      }
      const csv = report.benchmark?.csv ?? "";
      expect(csv.split("\n")[0]).toBe(
        [...RESULTS_CSV_COLUMNS, ...TRANSFER_CSV_COLUMNS, ...SPREAD_CSV_COLUMNS, ...CLIENT_CPU_CSV_COLUMNS].join(","),
      );
      expect(parseResultsCsv(csv)).toEqual(rows);
      console.log(`[pods] ${mode} benchmark rows:\n${csv}`);
      await explainSlowSwitchover(api, cluster.kubeconfig, NS, report.drills ?? []);
      await explainFailedDrills(api, cluster.kubeconfig, NS, report.drills ?? [], `results/pods-byo-${mode}-logs`);
      await expectDrills(api, NS, mode, clientNode, report);
      // The same rules the stack hands over (report.metrics.rules), at this Prometheus's interval; then what it saw.
      expect(ruleFileText(ruleGroups({ ...inputs, scrapeIntervalSeconds: DEFAULT_SCRAPE_INTERVAL_SECONDS }))).toBe(
        report.metrics?.rules,
      );
      await expectLiveMetricsOnRealPods({ prom, mode, ns: NS, drills: report.drills ?? [], fromMs: t0, toMs: t1 });
      const primaries = report.topology?.primaries ?? [];
      for (const p of primaries) {
        expect(zones).toContain(p.zone);
        expect(p.replicas.some((r) => r.crossAz && r.zone !== p.zone)).toBe(true);
      }
      if (mode === "cluster") {
        expect(primaries.map((p) => p.zone).sort()).toEqual([...zones].sort());
        expect(primaries.flatMap((p) => p.slotRanges).sort()).toEqual(["0-5460", "10922-16383", "5461-10921"]);
      } else {
        expect(primaries).toHaveLength(1);
        // The post-deploy check went through the three Sentinels, one per zone, all agreeing.
        const sentinels = report.sentinels ?? [];
        expect(sentinels.map((x) => [x.reachable, x.agrees])).toEqual([
          [true, true],
          [true, true],
          [true, true],
        ]);
        expect(new Set(sentinels.map((x) => x.zone))).toEqual(new Set(zones));
      }

      interface PodList {
        items: Array<{
          metadata: { name: string; labels?: Record<string, string> };
          spec: { nodeName?: string; containers: Array<{ image: string }> };
          status: { phase?: string; podIP?: string; containerStatuses?: Array<{ ready: boolean }> };
        }>;
      }
      const all = (await api<PodList>("GET", `/api/v1/namespaces/${NS}/pods`)).body.items;
      const bench = all.filter((p) => p.metadata.labels?.["app.kubernetes.io/name"] === "valkey-benchmark");
      // The drills' load pods may still be going (the step deletes their Jobs in the background).
      const pods = all.filter((p) => !bench.includes(p) && p.metadata.labels?.[DRILL_LOAD_LABEL] === undefined);
      // The benchmark pod ran on the node without Valkey, from the valkey image (valkey-benchmark).
      expect(bench.map((p) => [p.spec.nodeName, p.spec.containers[0]?.image, p.status.phase])).toEqual([
        [clientNode, previous, "Succeeded"],
      ]);
      // Cluster: 3 x (1 + 1) members. Replication: 4 members, 3 Sentinels, 2 HAProxy pods.
      expect(pods).toHaveLength(mode === "cluster" ? 6 : 9);
      for (const p of pods) {
        const haproxy = p.metadata.labels?.["app.kubernetes.io/component"] === "haproxy";
        expect(p.spec.containers[0]?.image).toBe(haproxy ? cluster.images.haproxy : previous);
        expect(p.status.containerStatuses?.every((c) => c.ready)).toBe(true);
      }
      expect(new Set(pods.map((p) => p.spec.nodeName)).size).toBe(3);
      expect(pods.map((p) => p.spec.nodeName)).not.toContain(clientNode);

      // The release's NetworkPolicies on real pods, probed from the client node: without the client
      // label, no member's 6379 (nor 16379 in cluster mode); with it, 6379 but never 16379 (the bus
      // is for members only: they formed the cluster through it above). The positive control shows
      // that a closed 16379 is the policy's doing: an extra policy admitting the probe opens it.
      const members = pods
        .filter((p) => p.metadata.labels?.[DATA_PLANE_LABEL] === "true")
        .map((p) => p.status.podIP ?? "");
      expect(members).toHaveLength(mode === "cluster" ? 6 : 4);
      await expectExecStatus(
        cluster.kubeconfig,
        NS,
        pods.find((p) => p.metadata.labels?.[DATA_PLANE_LABEL] === "true")?.metadata.name ?? "",
      );
      const at = (port: number): ProbeTarget[] => members.map((ip) => ({ ip, port }));
      const ports = mode === "cluster" ? [VALKEY_PORT, VALKEY_BUS_PORT] : [VALKEY_PORT];
      const run = (labels: Record<string, string>, targets: ProbeTarget[]) =>
        probe(api, { ns: NS, node: clientNode, image: cluster.images.valkey ?? "", labels, targets });
      const unlabelled = await run({ "probe.test/role": "none" }, ports.flatMap(at));
      expect([...unlabelled.values()].filter(Boolean), "a pod without the client label reached a member").toEqual([]);
      const client = await run({ [CLIENT_LABEL]: "true" }, ports.flatMap(at));
      expect(
        [...client.entries()]
          .filter(([, open]) => open)
          .map(([t]) => t)
          .sort(),
      ).toEqual(
        at(VALKEY_PORT)
          .map((t) => `${t.ip}:${t.port}`)
          .sort(),
      );
      // A pod with the benchmark pod's labels is under the benchmark's own egress policy: it reaches
      // its endpoint (cluster: the client Service; replication: HAProxy's write Service) and
      // nothing else (replication: not the members directly; cluster: not the bus).
      const asBenchmark = await run(
        {
          "app.kubernetes.io/name": "valkey-benchmark",
          "app.kubernetes.io/component": `benchmark-${mode}`,
          [CLIENT_LABEL]: "true",
        },
        [
          { ip: report.endpoints.write, port: report.endpoints.port },
          ...(mode === "cluster" ? at(VALKEY_BUS_PORT) : at(VALKEY_PORT)),
        ],
      );
      expect([...asBenchmark.entries()].filter(([, open]) => open).map(([t]) => t)).toEqual([
        `${report.endpoints.write}:${report.endpoints.port}`,
      ]);
      if (mode === "cluster") {
        const drop = await allowBusFrom(api, {
          ns: NS,
          name: "probe-bus-allow",
          to: { [DATA_PLANE_LABEL]: "true" },
          from: { "probe.test/role": "bus" },
          port: VALKEY_BUS_PORT,
        });
        try {
          const control = await run({ "probe.test/role": "bus" }, at(VALKEY_BUS_PORT));
          expect([...control.values()].every(Boolean), "positive control: 16379 with an allowing policy").toBe(true);
        } finally {
          await drop();
        }
      }

      // The metrics (support/metrics-checks.ts): every exporter and HAProxy's /metrics scraped from the
      // configured namespace by the configured labels only.
      await expectMetricsOnRealPods({ api, cluster, ns: NS, mode, node: clientNode });

      const upgrade = { api, cluster, stack: s, NS, mode, password: PASSWORD, valkey };
      const release = await expectUpgradeUnderLoad(upgrade);
      await expectLiveConfigChange(upgrade, { ...valkey, image: cluster.images.valkey }, release);
      // The benchmark Job running a mix in the node image (support/mix-checks.ts); cluster mode runs
      // it, and the scaling, on a second release after this one (dayTwo below).
      if (mode === "replication") await expectMixOnRealPods(upgrade, clientNode);

      // The diff another up would apply, shown when it is not empty.
      const plan = await s.stack.preview({ diff: true });
      const second = await withNetworkEvidence(api, PODS_PLAN, NS, () =>
        s.stack.up({ onOutput: (o) => s.log.push(o) }),
      );
      const changes = second.summary.resourceChanges ?? {};
      expect([changes.update ?? 0, changes.create ?? 0, changes.replace ?? 0], plan.stdout).toEqual([0, 0, 0]);
      await expectQuiet(prom, mode);
    } finally {
      await s.dispose();
      await prom.stop();
    }
    const pvs = (
      await api<{ items: Array<{ spec: { claimRef?: { namespace?: string } } }> }>("GET", "/api/v1/persistentvolumes")
    ).body.items;
    expect(pvs.filter((pv) => pv.spec.claimRef?.namespace === NS)).toEqual([]);
    expect((await api("GET", `/api/v1/namespaces/${NS}`)).status).toBe(404);
  };

  // The two modes run side by side (their own namespaces, stacks and load Jobs on the shared
  // cluster): most of each is waiting on pods, detection windows and rolls, and one after the
  // other they took 24 min of CI.
  it.concurrent(
    "cluster mode: up with real pods (bootstrap and check through port-forward, benchmark Job, drills primary/switchover/all), policies probed, every exporter and HAProxy scraped from metrics.scrapeFrom only; a real Prometheus there (targets up, dashboard queries answered, the drills' alerts, quiet once healthy); upgraded under load in role order; live config; up again no-op; destroy leaves nothing",
    { timeout: 1_800_000 },
    () => lifecycle("cluster"),
  );
  it.concurrent(
    "replication mode: the same, with the Sentinels and the HAProxy endpoint in real pods (the primary drill fires ValkeyPrimaryChanged on the promoted member); a mix in the benchmark Job",
    { timeout: 1_800_000 },
    () => lifecycle("replication"),
  );

  // Backup, destroy, restore into a new stack, refusals: each mode on its own S3 server. The
  // replication one runs beside the two lifecycles; the cluster one after them, beside the second
  // release (below): four stacks at once on two cores pushed both lifecycles past their timeout in CI.
  const backupAndRestore = (mode: "cluster" | "replication"): void =>
    it.concurrent(
      `backup and restore, ${mode} mode (byo: an S3-compatible server and the user's Secret): a Job from the CronJob snapshots every shard from a replica and uploads RDBs and manifest; destroy; a new stack restores it, every key back; pods from the deployed template refuse a corrupted and a missing object and place nothing on a lost volume (support/backup-checks.ts, restore-checks.ts)`,
      { timeout: 1_800_000 },
      () => expectBackupOnRealPods(ctx, mode),
    );
  backupAndRestore("replication");

  // Cluster mode's day-2 changes on a second release, after the three above have ended (in the
  // lifecycle, the cluster one ran past its timeout in CI; as a fifth stack beside them, its first
  // up took 1,041 s where it takes 92 s alone): deployed with the current image, benchmark off,
  // one cheap drill (a replica's pod deleted) whose load target the checks under load reuse, and
  // the held faults (freeze, partition: the privileged agent pod on the primary's node); then
  // a mix in the benchmark Job, open loop; then 3 x 1 -> 4 x 1 -> 3 x 1 under load.
  const dayTwo = async (): Promise<void> => {
    const NS = "valkey-scale-pods";
    const { cluster, api, env, clientNode } = ctx;
    const config = podsStackConfig(cluster, "cluster", NS, {
      benchmark: { enabled: false },
      drills: { ...drillConfig(cluster), faults: ["replica", ...HELD_FAULTS] },
    });
    const valkey = {
      ...detectionSettings("cluster", config.valkey as Record<string, unknown>),
      image: cluster.images.valkey,
    };
    const s = await createStack(env, { ...config, valkey }, { password: PASSWORD });
    try {
      const t0 = Date.now();
      const { up: first, slowest } = await withNetworkEvidence(api, PODS_PLAN, NS, () => upWithSlowestSteps(s));
      console.log(
        `[pods] cluster (second release): first up (deploy, bootstrap, check, drills replica/freeze/partition) ${Math.round((Date.now() - t0) / 1000)} s; slowest steps: ${slowest}`,
      );
      expect(first.summary.result, tail(s.log)).toBe("succeeded");
      expectHeldFaults(
        "cluster",
        first.outputs.report?.value as { drills: DrillRow[] | null; drillsCsv: string | null },
        HELD_FAULTS,
      );
      const c = { api, cluster, stack: s, NS, mode: "cluster" as const, password: PASSWORD, valkey };
      const release = await drillInputs(s);
      await expectMixOnRealPods(c, clientNode);
      await expectScaleUpThenIn(c, release, 3, 1);
    } finally {
      await s.dispose();
    }
    expect((await api("GET", `/api/v1/namespaces/${NS}`)).status).toBe(404);
  };
  // A suite of its own: it starts once the group above has ended, and its two tests run side by side.
  describe("after the lifecycles", () => {
    it.concurrent(
      "cluster mode, a second release: freeze and partition drills by a privileged agent pod on the primary's node, healed; a mix in the benchmark Job (open loop); scaled 3x1 -> 4x1 -> 3x1 under load; destroy leaves nothing",
      { timeout: 1_500_000 },
      dayTwo,
    );
    backupAndRestore("cluster");
  });
});
