/**
 * Pod discovery and the Kubernetes ZoneSource over a FAKE PodApi (StaticPodApi: pure data, no
 * API server can run here), plus the client-node V1Pod -> PodRecord mapping and kubeconfig
 * loading on literal objects.
 */
import { describe, expect, it } from "vitest";
import type { V1Pod } from "@kubernetes/client-node";
import { DirectConnector } from "../../core/topology/connector.js";
import { connectorFor } from "../../components/steps/kit/kube-access.js";
import { loadKubeConfig, podRecordFromV1 } from "../../components/kubernetes/pod-api.js";
import { discoverPods, podPorts, unusablePods } from "../../components/kubernetes/pod-discovery.js";
import { PortForwardConnector } from "../../components/kubernetes/port-forward-connector.js";
import { matchesSelector, StaticPodApi, type StaticPod } from "../../components/kubernetes/static-pod-api.js";
import { KubernetesZoneSource } from "../../components/kubernetes/zone-source.js";

const sel = "app.kubernetes.io/instance=valkey";
const labels = { "app.kubernetes.io/instance": "valkey" };
const pod = (i: number, node: string, extra: Partial<StaticPod> = {}): StaticPod => ({
  name: `valkey-${i}`,
  podIP: `10.0.1.${10 + i}`,
  nodeName: node,
  labels,
  subdomain: "valkey-headless",
  ...extra,
});

function fixture(): StaticPodApi {
  return new StaticPodApi(
    [pod(10, "n-c"), pod(2, "n-b"), pod(0, "n-a"), pod(1, "n-a"), { ...pod(9, "n-a"), labels: { other: "x" } }],
    {
      "n-a": "us-west-2a",
      "n-b": "us-west-2b",
      "n-c": "us-west-2c",
      "n-x": "us-west-2x",
    },
  );
}

describe("discoverPods", () => {
  it("lists the selected pods in ordinal order with zones, reading each node once", async () => {
    const api = fixture();
    const pods = await discoverPods(api, { namespace: "data", selector: sel });
    expect(pods.map((p) => [p.name, p.ordinal, p.podIP, p.nodeName, p.zone, p.ready, p.port, p.busPort])).toEqual([
      ["valkey-0", 0, "10.0.1.10", "n-a", "us-west-2a", true, 6379, 16379],
      ["valkey-1", 1, "10.0.1.11", "n-a", "us-west-2a", true, 6379, 16379],
      ["valkey-2", 2, "10.0.1.12", "n-b", "us-west-2b", true, 6379, 16379],
      ["valkey-10", 10, "10.0.1.20", "n-c", "us-west-2c", true, 6379, 16379],
    ]);
    expect([...api.nodeReads].sort()).toEqual(["n-a", "n-b", "n-c"]);
    expect(api.podLists).toEqual([`data|${sel}`]);
  });

  it("names unusable pods: not ready, unscheduled, no IP, node without a zone label", async () => {
    const api = new StaticPodApi(
      [pod(0, "n-a", { ready: false }), { name: "valkey-1", labels }, pod(2, "n-nozone"), pod(3, "n-a")],
      {
        "n-a": "z1",
        "n-nozone": { "kubernetes.io/hostname": "n-nozone" },
      },
    );
    const pods = await discoverPods(api, { namespace: "d", selector: sel });
    expect(unusablePods(pods)).toEqual([
      "valkey-0 (not ready)",
      "valkey-1 (no pod IP, not scheduled)",
      "valkey-2 (node n-nozone has no topology.kubernetes.io/zone label)",
    ]);
  });

  it("fails naming the node it cannot read", async () => {
    const api = new StaticPodApi([pod(0, "gone")], {});
    await expect(discoverPods(api, { namespace: "d", selector: sel })).rejects.toThrow(/cannot read node gone/);
  });

  it("takes ports from named container ports, else 6379/16379", () => {
    const rec = {
      name: "a",
      podIP: undefined,
      nodeName: undefined,
      ready: true,
      labels: {},
      subdomain: undefined,
      initMessages: {},
    };
    expect(podPorts({ ...rec, ports: { "tcp-redis": 7000, "tcp-redis-bus": 17000 } })).toEqual({
      port: 7000,
      busPort: 17000,
    });
    expect(podPorts({ ...rec, ports: { metrics: 9121 } })).toEqual({ port: 6379, busPort: 16379 });
  });
});

describe("KubernetesZoneSource", () => {
  it("maps pod IPs and stable DNS names (with the pod's port) to the node's zone", async () => {
    const zs = new KubernetesZoneSource(fixture(), { namespace: "data", selector: sel });
    const m = await zs.zonesFor([
      { host: "10.0.1.12", port: 6379 },
      { host: "valkey-0.valkey-headless.data.svc.cluster.local", port: 6379 },
      { host: "VALKEY-10.valkey-headless.data.svc", port: 6379 },
      { host: "valkey-1.valkey-headless.data.svc.cluster.local.", port: 6379 },
      { host: "10.0.1.12", port: 7000 },
      { host: "10.9.9.9", port: 6379 },
    ]);
    expect(Object.fromEntries(m)).toEqual({
      "10.0.1.12:6379": "us-west-2b",
      "valkey-0.valkey-headless.data.svc.cluster.local:6379": "us-west-2a",
      "VALKEY-10.valkey-headless.data.svc:6379": "us-west-2c",
      "valkey-1.valkey-headless.data.svc.cluster.local.:6379": "us-west-2a",
    });
  });

  it("uses the headless Service and cluster domain given, over spec.subdomain", async () => {
    const zs = new KubernetesZoneSource(fixture(), {
      namespace: "data",
      selector: sel,
      headlessService: "hl",
      clusterDomain: "corp.local",
    });
    const m = await zs.zonesFor([
      { host: "valkey-2.hl.data.svc.corp.local", port: 6379 },
      { host: "valkey-2.valkey-headless.data.svc.cluster.local", port: 6379 },
    ]);
    expect([...m.entries()]).toEqual([["valkey-2.hl.data.svc.corp.local:6379", "us-west-2b"]]);
  });
});

describe("client-node mapping and kubeconfig", () => {
  it("maps a V1Pod to a PodRecord", () => {
    const v1: V1Pod = {
      metadata: { name: "valkey-3", labels },
      spec: {
        nodeName: "ip-10-0-1-1",
        subdomain: "valkey-headless",
        containers: [
          {
            name: "valkey",
            ports: [
              { name: "valkey", containerPort: 6379 },
              { containerPort: 9000 },
              { name: "cluster-bus", containerPort: 16379 },
            ],
          },
        ],
      },
      status: {
        podIP: "10.0.1.1",
        conditions: [{ type: "Ready", status: "True" }],
        // Init containers' termination messages: the last run's, then the one before; none when empty.
        initContainerStatuses: [
          {
            name: "restore-fetch",
            image: "i",
            imageID: "",
            ready: true,
            restartCount: 0,
            state: { terminated: { exitCode: 0, message: "" } },
          },
          {
            name: "restore-place",
            image: "i",
            imageID: "",
            ready: true,
            restartCount: 1,
            state: { terminated: { exitCode: 0, message: "now" } },
            lastState: { terminated: { exitCode: 0, message: "before" } },
          },
        ],
      },
    };
    expect(podRecordFromV1(v1)).toEqual({
      name: "valkey-3",
      podIP: "10.0.1.1",
      nodeName: "ip-10-0-1-1",
      ready: true,
      labels,
      subdomain: "valkey-headless",
      ports: { "valkey": 6379, "cluster-bus": 16379 },
      initMessages: { "restore-place": ["now", "before"] },
    });
    expect(
      podRecordFromV1({
        metadata: { name: "p" },
        status: { podIP: "", conditions: [{ type: "Ready", status: "False" }] },
      }),
    ).toMatchObject({
      podIP: undefined,
      nodeName: undefined,
      ready: false,
    });
  });

  it("selects a context, and never echoes the kubeconfig in errors", () => {
    const token = "tok-very-secret-123";
    const kubeconfig = JSON.stringify({
      "apiVersion": "v1",
      "kind": "Config",
      "clusters": [{ name: "c", cluster: { server: "http://127.0.0.1:1" } }],
      "users": [{ name: "u", user: { token } }],
      "contexts": [
        { name: "one", context: { cluster: "c", user: "u" } },
        { name: "two", context: { cluster: "c", user: "u" } },
      ],
      "current-context": "one",
    });
    expect(loadKubeConfig(kubeconfig, "two").getCurrentContext()).toBe("two");
    expect(loadKubeConfig(kubeconfig).getCurrentContext()).toBe("one");
    expect(() => loadKubeConfig(kubeconfig, "three")).toThrow(
      "the kubeconfig has no context named 'three' (has: one, two)",
    );
    let msg = "";
    try {
      loadKubeConfig(`{ not yaml: [ ${token}`);
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toMatch(/could not be parsed/);
    expect(msg).not.toContain(token);
  });

  it("matches equality selectors", () => {
    expect(matchesSelector({ a: "1", b: "2" }, "a=1, b==2")).toBe(true);
    expect(matchesSelector({ a: "1" }, "a=1,b")).toBe(false);
    expect(matchesSelector({ a: "1" }, "a!=2")).toBe(true);
  });

  it("connectorFor builds the direct or the port-forward connector", () => {
    let forwarders = 0;
    const forwarder = () => {
      forwarders++;
      return { forward: () => Promise.resolve() };
    };
    expect(connectorFor("direct", { namespace: "d", pods: [], forwarder })).toBeInstanceOf(DirectConnector);
    expect(forwarders).toBe(0);
    expect(connectorFor("port-forward", { namespace: "d", pods: [], forwarder })).toBeInstanceOf(PortForwardConnector);
    expect(forwarders).toBe(1);
  });
});
