/**
 * The deployed drill's detection watchers (components/steps/failure-drill/detection.ts) on REAL
 * processes: Sentinel `+sdown` subscriptions on a local Sentinel topology, and CLUSTER NODES polls
 * of the survivors on a local cluster, each seeing a SIGKILLed member within the local failure
 * detection bounds (down-after / cluster-node-timeout 2000 ms). Plus the parsers on real formats.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { killHard } from "../../harness/local/sentinel-topology.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { parseEndpoint } from "../../vocabulary/endpoint.js";
import {
  failedHosts,
  namesPod,
  nodeRoles,
  sdownHost,
  clusterRoleRows,
  watchClusterNodes,
  watchSentinels,
} from "../../components/steps/failure-drill/detection.js";
import { failoverSteps, sentinelEventRows } from "../../core/drill/sentinel-events.js";
import { drillPod } from "../support/fake-drill-kube.js";
import { startTestCluster, startTestReplication, TIMINGS } from "../harness/drill-faults.js";

const PASSWORD = "detect-test-pw";
const pod = drillPod;

async function until(f: () => number | undefined, ms: number): Promise<number | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end && f() === undefined) await new Promise((r) => setTimeout(r, 100));
  return f();
}

describe("detection parsers", () => {
  it("reads the host of a +sdown payload (master and replica forms)", () => {
    expect(sdownHost("master valkey 10.0.0.5 6379")).toBe("10.0.0.5");
    expect(
      sdownHost(
        "slave valkey-1.h.ns.svc.cluster.local:6379 valkey-1.h.ns.svc.cluster.local 6379 @ valkey 10.0.0.5 6379",
      ),
    ).toBe("valkey-1.h.ns.svc.cluster.local");
  });

  it("lists the address and hostname of every node CLUSTER NODES flags fail? or fail, and no other", () => {
    const id = (c: string) => c.repeat(40);
    const text = [
      `${id("a")} 10.0.0.1:6379@16379,valkey-0 myself,master - 0 0 1 connected 0-5460`,
      `${id("b")} 10.0.0.2:6379@16379,valkey-1 master,fail? - 0 0 2 connected 5461-10922`,
      `${id("c")} 10.0.0.3:6379@16379,valkey-2 slave,fail ${id("a")} 0 0 1 connected`,
      `${id("d")} 10.0.0.4:6379@16379 slave ${id("a")} 0 0 1 connected`,
      `${id("e")} 10.0.0.5:6379@16379 slave,fail ${id("a")} 0 0 1 connected`,
    ].join("\n");
    expect(failedHosts(text)).toEqual(["10.0.0.2", "valkey-1", "10.0.0.3", "valkey-2", "10.0.0.5"]);
  });

  it("reads every node's role from CLUSTER NODES: hostname (else ip:port), master/slave, fail marks, a slotless master", () => {
    const text = [
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 10.0.0.1:6379@16379,valkey-0 myself,master - 0 0 1 connected 0-5460",
      "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 10.0.0.2:6379@16379,valkey-1 master,fail? - 0 0 2 connected 5461-10922",
      "cccccccccccccccccccccccccccccccccccccccc 10.0.0.3:6379@16379,valkey-2 slave,fail aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0 0 1 connected",
      "dddddddddddddddddddddddddddddddddddddddd 10.0.0.4:6379@16379, slave aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0 0 1 connected",
      "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee 10.0.0.5:6379@16379,valkey-4 master - 0 0 3 connected",
      "ffffffffffffffffffffffffffffffffffffffff :0@0 noaddr,handshake - 0 0 0 disconnected",
    ].join("\n");
    expect([...nodeRoles(text)]).toEqual([
      ["valkey-0", "master"],
      ["valkey-1", "master,fail?"],
      ["valkey-2", "slave,fail"],
      ["10.0.0.4:6379", "slave"],
      ["valkey-4", "master (no slots)"],
    ]);
  });

  it("matches a pod by IP, by its DNS name, never by a longer name's prefix", () => {
    const pods = [pod("valkey-1", "10.0.0.2")];
    expect(namesPod("10.0.0.2", pods)).toBe(true);
    expect(namesPod("valkey-1.valkey-headless.ns.svc.cluster.local.", pods)).toBe(true);
    expect(namesPod("valkey-10.valkey-headless.ns.svc.cluster.local", pods)).toBe(false);
  });
});

describe("detection watchers on real processes", () => {
  let replication: ReplicationTarget | undefined;
  let cluster: ClusterTarget | undefined;
  afterAll(async () => {
    await replication?.stop();
    await cluster?.stop();
  });

  it("Sentinels: +sdown of the SIGKILLed primary, seen after down-after and well within the local bound; every Sentinel's events kept, the failover's steps in order", async () => {
    replication = await startTestReplication(PASSWORD);
    const primaryHost = parseEndpoint((await replication.verify()).shards[0]!.primary.address).host;
    const connector = new DirectConnector({ password: PASSWORD });
    const clients = await Promise.all(
      replication.t.sentinelEndpoints.map(async (e, n) => ({
        pod: `sentinel-${n}`,
        client: await connector.connect(e),
      })),
    );
    const watch = await watchSentinels(clients);
    const faultAt = Date.now();
    watch.arm([pod("member-0", primaryHost)], faultAt);
    const handle = await replication.inject("primary");
    const seen = await until(() => watch.detectedAt(), 20_000);
    // Watched on until a Sentinel switched its primary (the failover's last step).
    await until(
      () => failoverSteps(sentinelEventRows(watch.events?.() ?? [], faultAt)).switchedMs ?? undefined,
      20_000,
    );
    await watch.stop();
    await handle.restored;
    expect(seen, "no +sdown for the killed primary").toBeDefined();
    expect(seen! - faultAt).toBeGreaterThanOrEqual(TIMINGS.failureDetectionMs / 2);
    expect(seen! - faultAt).toBeLessThanOrEqual(15_000);
    // Every Sentinel's events were kept, named by its pod: the failover's steps in order, from the
    // +sdown the detection saw to a Sentinel switching its primary.
    const rows = sentinelEventRows(watch.events?.() ?? [], faultAt);
    const steps = failoverSteps(rows);
    expect(steps.sdownMs, JSON.stringify(rows)).toBe(Math.round(seen! - faultAt));
    for (const [a, b] of [
      [steps.sdownMs, steps.odownMs],
      [steps.odownMs, steps.promotedMs],
      [steps.promotedMs, steps.switchedMs],
    ] as const)
      expect(a !== null && b !== null && a <= b, JSON.stringify(steps)).toBe(true);
    expect(new Set(rows.map((r) => r.sentinel)), JSON.stringify(rows)).toEqual(new Set(clients.map((c) => c.pod)));
  }, 120_000);

  it("cluster: a survivor's CLUSTER NODES flags the SIGKILLed member, after the node timeout and within the bound; the victim is not polled after the fault; the roles before it and the flag after it are kept", async () => {
    cluster = await startTestCluster(PASSWORD, 176);
    const connector = new DirectConnector({ password: PASSWORD });
    const clients = await Promise.all(
      cluster.pods.map(async (p) => ({ pod: p.name, client: await connector.connect({ host: p.host, port: p.port }) })),
    );
    const before = await cluster.verify();
    const victim = cluster.pods[4]!;
    let victimPolled = 0;
    let faultAt = Infinity;
    const original = clients.find((c) => c.pod === victim.name)!.client;
    const spy = original.call.bind(original);
    original.call = ((...a: Parameters<typeof original.call>) => (
      Date.now() >= faultAt && victimPolled++,
      spy(...a)
    )) as typeof original.call;
    const watch = await watchClusterNodes(clients, 200);
    faultAt = Date.now();
    watch.arm([pod(victim.name, victim.host)], faultAt);
    await killHard(victim.proc);
    const seen = await until(() => watch.detectedAt(), 20_000);
    await watch.stop();
    expect(seen, "no fail?/fail flag for the killed member").toBeDefined();
    expect(seen! - faultAt).toBeGreaterThanOrEqual(TIMINGS.failureDetectionMs / 2);
    expect(seen! - faultAt).toBeLessThanOrEqual(15_000);
    expect(victimPolled).toBe(0);
    // The roles: one entry per member before the fault, the same primaries the verifier named; the victim's flag after.
    const roles = clusterRoleRows(watch.roles?.() ?? [], faultAt);
    const first = roles.filter((r) => r.t <= 0);
    expect(first.length, JSON.stringify(roles)).toBe(cluster.pods.length);
    // The members announce hostnames (<pod>.<service>.<namespace>); the verifier names addresses.
    const podOf = (node: string): string => node.split(".")[0]!;
    const primaries = first.filter((r) => r.role === "master").map((r) => podOf(r.node));
    const addresses = new Set(before.shards.map((s) => s.primary.address));
    expect(new Set(primaries)).toEqual(
      new Set(cluster.pods.filter((p) => addresses.has(`${p.host}:${p.port}`)).map((p) => p.name)),
    );
    const flagged = roles.find(
      (r) => podOf(r.node) === victim.name && r.t > 0 && /,fail\??( \(no slots\))?$/.test(r.role),
    );
    expect(flagged, JSON.stringify(roles)).toBeDefined();
  }, 120_000);
});
