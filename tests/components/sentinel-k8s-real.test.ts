/**
 * The Kubernetes side of replication under Sentinel, on REAL local processes: a SentinelTopology
 * (members started by the rendered entrypoint with the Sentinel start decision, 3 real
 * `valkey-server --sentinel`). Faked: only the Kubernetes API (a StaticPodApi whose pods are
 * these servers, on fake nodes carrying their zones).
 *
 * - the TopologyCheck implementation discovers the primary from the Sentinels, reports them
 *   (address, zone, agrees), follows a failover, and fails with SENTINEL_QUORUM when two of
 *   three Sentinels are gone;
 * - the members' preStop (replication-prestop-script.ts) run by sh on the primary: SENTINEL
 *   FAILOVER, and it returns once another member is primary; on a replica it returns at once.
 */
import { checkStep } from "../../components/steps/topology-check/declaration.js";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";
import {
  checkTopologyOnKubernetes,
  kubernetesVerifier,
  TopologyCheckError,
  type CheckDeps,
  type TopologyCheckInputs,
} from "../../components/steps/topology-check/implementation.js";
import { renderReplicationPreStopScript } from "../../pod/replication-prestop-script.js";
import { collectSentinels, type SentinelCapture } from "../../core/verify/sentinel-analysis.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import { waitForReplicaLinks } from "../../harness/local/local-replication.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];

function depsFor(t: SentinelTopology): CheckDeps {
  const pods = [
    ...t.members.map((m, i) => ({
      name: `valkey-${i}`,
      podIP: m.host,
      nodeName: `node-${m.zone}`,
      labels: { app: "v" },
      ports: { valkey: m.port },
    })),
    ...t.sentinels.map((s, i) => ({
      name: `valkey-sentinel-${i}`,
      podIP: s.host,
      nodeName: `node-${s.zone}`,
      labels: { app: "s" },
      ports: { sentinel: s.port },
    })),
  ];
  const api = new StaticPodApi(pods, Object.fromEntries(zones.map((z) => [`node-${z}`, z])));
  return {
    podApi: api,
    connector: () => new DirectConnector({ password }),
    sentinelPortsOf: (pod) => ({ port: pod.ports.sentinel ?? 0, busPort: 0 }),
  };
}

const inputs = (t: SentinelTopology, timeoutMs = 3000): TopologyCheckInputs => ({
  ...checkStep.parse({
    mode: "replication",
    namespace: "data",
    selector: "app=v",
    kubeconfig: "unused",
    connector: "direct",
    expect: { replicas: 2 },
    sentinel: { selector: "app=s", port: 26379, masterName: t.masterName },
    timeoutMs,
  }),
  password,
});

function runSh(
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), "prestop-"));
  const file = join(dir, "prestop.sh");
  writeFileSync(file, script, { mode: 0o600 });
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const p = spawn("sh", [file], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
    p.on("error", reject);
    p.on("exit", (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

describe("replication under Sentinel on real processes (fake Kubernetes API only)", () => {
  let t: SentinelTopology;
  beforeAll(async () => {
    t = await SentinelTopology.start({
      replicas: 2,
      zones,
      password,
      downAfterMs: 1000,
      failoverTimeoutMs: 3000,
      proxy: false,
      hostBase: 140,
    });
  }, 120_000);
  afterAll(async () => {
    await t?.stopAll();
  });

  it("TopologyCheck discovers the primary from the Sentinels and reports every Sentinel with its zone", async () => {
    const primary = await t.primaryFromSentinels();
    const out = await checkTopologyOnKubernetes(inputs(t), depsFor(t));
    expect(out.report.ok).toBe(true);
    expect(out.report.shards[0]?.primary.address).toBe(primary);
    expect(out.report.shards[0]?.replicas).toHaveLength(2);
    expect(out.report.masterName).toBe(t.masterName);
    expect(out.report.sentinels).toEqual(
      t.sentinels.map((s) => ({ address: s.address, zone: s.zone, reachable: true, agrees: true, primary })),
    );
    expect(out.table).toContain("Sentinels");
  }, 60_000);

  it("TopologyCheck waits, within its timeout, for a Sentinel pod not ready yet (a loaded node's probe), and names it when it stays unready", async () => {
    const deps = depsFor(t);
    const api = deps.podApi as StaticPodApi;
    const sentinel = api.pods.find((p) => p.name === "valkey-sentinel-1");
    if (sentinel === undefined) throw new Error("no valkey-sentinel-1 pod");
    sentinel.ready = false;
    const never = await checkTopologyOnKubernetes(inputs(t, 500), deps).then(
      () => "passed",
      (err: Error) => err.message,
    );
    expect(never).toMatch(/Sentinel pods in namespace data are not usable yet: valkey-sentinel-1 \(not ready\)/);
    const lists = api.podLists.length;
    setTimeout(() => (sentinel.ready = true), 3000);
    const out = await checkTopologyOnKubernetes(inputs(t, 20_000), deps);
    expect(out.report.ok).toBe(true);
    expect(api.podLists.length - lists).toBeGreaterThan(2);
  }, 60_000);

  it("TopologyCheck asks again, within its timeout, while no Sentinel answers yet (pods with IPs, servers not listening), and names every Sentinel when none ever does", async () => {
    const deps = depsFor(t);
    const real = deps.sentinelPortsOf;
    if (real === undefined) throw new Error("depsFor gives sentinelPortsOf");
    // Port 1 on the Sentinels' addresses: nothing listens there (connection refused), as on a
    // Sentinel pod whose container has an IP but whose server has not bound its port yet.
    let listening = false;
    const asked: number[] = [];
    const ports: CheckDeps = {
      ...deps,
      sentinelPortsOf: (pod) => {
        asked.push(Date.now());
        return listening ? real(pod) : { port: 1, busPort: 0 };
      },
    };
    const never = await checkTopologyOnKubernetes(inputs(t, 500), ports).then(
      () => "passed",
      (err: Error) => err.message,
    );
    expect(never).toMatch(/no Sentinel answered: /);
    for (const s of t.sentinels) expect(never).toContain(`${s.host}:1`);
    asked.length = 0;
    setTimeout(() => (listening = true), 3000);
    const out = await checkTopologyOnKubernetes(inputs(t, 20_000), ports);
    expect(out.report.ok).toBe(true);
    expect(out.report.sentinels?.map((s) => s.reachable)).toEqual([true, true, true]);
    // Discovered again after the first verdict threw: more than one look at the Sentinel pods.
    expect(new Set(asked.map((ms) => Math.floor(ms / 1000))).size).toBeGreaterThan(1);
  }, 60_000);

  it("preStop on a replica stops at once; on the primary it triggers SENTINEL FAILOVER and returns once another member is primary", async () => {
    const cli = resolveBinaries().cli.path;
    const before = await t.primaryFromSentinels();
    const primary = t.member(before);
    const replica = t.members.find((m) => m !== primary);
    if (replica === undefined) throw new Error("no replica");
    const sentinels = t.sentinels.map((s) => s.address);
    const env = (m: typeof primary): Record<string, string> => ({
      VALKEY_CLI: cli,
      REDISCLI_AUTH: password,
      VALKEY_ANNOUNCE_HOST: m.host,
    });
    const onReplica = await runSh(
      renderReplicationPreStopScript({
        masterName: t.masterName,
        sentinels,
        port: replica.port,
        localHost: replica.host,
        timeoutSeconds: 20,
      }),
      env(replica),
      30_000,
    );
    expect(onReplica.code).toBe(0);
    expect(onReplica.stderr).toContain("not the primary");
    expect(await t.primaryFromSentinels()).toBe(before);

    const res = await runSh(
      renderReplicationPreStopScript({
        masterName: t.masterName,
        sentinels,
        port: primary.port,
        localHost: primary.host,
        timeoutSeconds: 20,
      }),
      env(primary),
      40_000,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("SENTINEL FAILOVER via");
    expect(res.stderr).toContain("switchover done");
    const after = await t.primaryFromSentinels();
    expect(after).not.toBe(before);
    // A switchover, not a down-after outage: generous bound for a shared 2-core machine.
    expect(res.ms).toBeLessThan(15_000);
    expect(res.stderr).not.toContain(password);
    // The check follows the new primary once the old one has rejoined as a replica.
    await pollUntil(
      async () => {
        const r = await checkTopologyOnKubernetes(inputs(t), depsFor(t)).catch((e: Error) => e);
        return r instanceof Error ? (r.message.split("\n")[0] ?? "error") : true;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: "the check passing after the switchover" },
    );
    const out = await checkTopologyOnKubernetes(inputs(t), depsFor(t));
    expect(out.report.shards[0]?.primary.address).toBe(after);
  }, 120_000);

  it("a failure named on a Sentinel in TILT (a real one: stalled while a replica came back) is asked again past the timeout until the TILT ends, then passes; the table says TILT meanwhile", async () => {
    const primary = await t.primaryFromSentinels();
    const replica = t.members.find((m) => m.address !== primary);
    const [s0] = t.sentinels;
    if (replica === undefined || s0 === undefined) throw new Error("a replica and a Sentinel expected");
    const connector = new DirectConnector({ password, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
    const views = () => collectSentinels(connector, t.sentinelEndpoints, t.masterName);
    const flagOf = (c: SentinelCapture) => c.replicas?.find((r) => r.address === replica.address)?.flags ?? "unknown";
    try {
      // The replica dies and every Sentinel flags it down (down-after 1 s).
      await killHard(replica.proc);
      await pollUntil(
        async () => ((await views()).every((c) => /s_down/.test(flagOf(c))) ? true : "not s_down everywhere"),
        { timeoutMs: 20_000, intervalMs: 200, what: `every Sentinel to flag ${replica.address} s_down` },
      );
      // One Sentinel is stalled while the replica comes back and links (at least 3 s): once resumed,
      // its timer has run over 2 s late, so it is in TILT (sentinel.c) and its s_down flag stays for 30 s.
      s0.proc?.signal("SIGSTOP");
      const stalled = Date.now();
      await t.startMember(replica.ordinal);
      await waitForReplicaLinks([replica], password, 30_000);
      await new Promise((r) => setTimeout(r, Math.max(0, 3000 - (Date.now() - stalled))));
      s0.proc?.signal("SIGCONT");
      await pollUntil(async () => ((await views())[0]?.tilt === true ? true : "not in TILT"), {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: `${s0.address} to report sentinel_tilt:1`,
      });
      // One look: the failure is named on the Sentinel in TILT, and the table says so.
      const v = await kubernetesVerifier(inputs(t), depsFor(t));
      const once = await v.verify().finally(() => v.close());
      expect(once.failures.map((f) => [f.code, f.node])).toContainEqual(["SENTINEL_REPLICA_DOWN", s0.address]);
      expect(formatTopologyReport(once)).toMatch(
        new RegExp(`SENTINEL ${s0.address.replace(/\./g, "\\.")} .* in TILT \\(its flags frozen until it leaves\\)`),
      );
      // Asked with a 1 s timeout (30 s of TILT ahead): it keeps asking past it, and passes once TILT ends.
      const out = await checkTopologyOnKubernetes(inputs(t, 1000), depsFor(t));
      expect(out.report.ok).toBe(true);
      expect((await views()).map((c) => [c.tilt, flagOf(c)])).toEqual(t.sentinels.map(() => [false, "slave"]));
    } finally {
      s0.proc?.signal("SIGCONT");
      await connector.close();
    }
  }, 120_000);

  it("fails with SENTINEL_QUORUM when two of the three Sentinels are gone", async () => {
    await killHard(t.sentinels[1]?.proc);
    await killHard(t.sentinels[2]?.proc);
    let err: unknown;
    try {
      await checkTopologyOnKubernetes(inputs(t), depsFor(t));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TopologyCheckError);
    expect((err as TopologyCheckError).report.failures.map((f) => f.code)).toContain("SENTINEL_QUORUM");
  }, 60_000);
});
