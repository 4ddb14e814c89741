/**
 * The PortForwardConnector with the API server's port-forward FAKED: an injected Forwarder pipes
 * each accepted local socket to a REAL valkey-server on loopback (standing in for the pod), so
 * ioredis really talks to Valkey (with AUTH) through the connector's listener. Real: the
 * listener, the endpoint -> pod mapping, ioredis, valkey-server. Fake: the tunnel itself.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { discoverPods, type DiscoveredPod } from "../../components/kubernetes/pod-discovery.js";
import {
  PortForwardConnector,
  type ForwardTarget,
  type Forwarder,
} from "../../components/kubernetes/port-forward-connector.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;

/** Pipes to the real server standing in for `pod`; records every tunnel opened. */
class LoopbackForwarder implements Forwarder {
  readonly opened: ForwardTarget[] = [];
  readonly upstreams = new Set<Socket>();
  constructor(private readonly servers: Record<string, ValkeyProcess>) {}

  forward(t: ForwardTarget, socket: Socket): Promise<void> {
    const server = this.servers[t.pod];
    if (server === undefined || t.port !== 6379) return Promise.reject(new Error(`no pod ${t.pod}:${t.port}`));
    this.opened.push(t);
    return new Promise((resolve, reject) => {
      const up = connect({ host: server.host, port: server.port }, () => resolve());
      this.upstreams.add(up);
      up.once("close", () => this.upstreams.delete(up));
      up.once("error", reject);
      socket.pipe(up).pipe(socket);
      socket.once("close", () => up.destroy());
    });
  }
}

describe("PortForwardConnector", () => {
  const fleet = new LocalFleet();
  let servers: Record<string, ValkeyProcess>;
  let pods: DiscoveredPod[];

  beforeAll(async () => {
    const [a, b] = await fleet.startMany(2, (i) => ({ name: `pf-${i}`, password }));
    servers = { "valkey-0": a as ValkeyProcess, "valkey-1": b as ValkeyProcess };
    const api = new StaticPodApi(
      [0, 1].map((i) => ({
        name: `valkey-${i}`,
        podIP: `10.0.3.${i + 1}`,
        nodeName: "n",
        labels: { app: "v" },
        subdomain: "valkey-headless",
      })),
      { n: "us-east-1a" },
    );
    pods = await discoverPods(api, { namespace: "data", selector: "app=v" });
  });
  afterAll(() => fleet.stopAll());

  it("reaches each pod by pod IP or DNS name through one listener per pod, and close() tears them down", async () => {
    const fwd = new LoopbackForwarder(servers);
    const c = new PortForwardConnector({ namespace: "data", pods, forwarder: fwd, connect: { password } });
    const r0 = await c.connect({ host: "10.0.3.1", port: 6379 });
    await r0.set("k", "through-the-tunnel");
    expect(await r0.get("k")).toBe("through-the-tunnel");
    expect(await r0.config("GET", "port")).toEqual(["port", String(servers["valkey-0"]?.port)]);

    const r0b = await c.connect({ host: "valkey-0.valkey-headless.data.svc.cluster.local", port: 6379 });
    expect(await r0b.get("k")).toBe("through-the-tunnel");
    const r1 = await c.connect({ host: "valkey-1.valkey-headless.data.svc", port: 6379 });
    expect(await r1.get("k")).toBeNull();
    expect(await r1.config("GET", "port")).toEqual(["port", String(servers["valkey-1"]?.port)]);

    expect(c.listenerCount).toBe(2);
    expect(fwd.opened).toEqual([
      { namespace: "data", pod: "valkey-0", port: 6379 },
      { namespace: "data", pod: "valkey-0", port: 6379 },
      { namespace: "data", pod: "valkey-1", port: 6379 },
    ]);
    const localPort = await c.localPort({ host: "10.0.3.1", port: 6379 });
    await c.close();
    expect(c.listenerCount).toBe(0);
    // Listener closed and every forwarded connection destroyed.
    await expect(r0.get("k")).rejects.toThrow();
    await expect(
      new Promise((resolve, reject) => {
        const s = connect({ host: "127.0.0.1", port: localPort }, () => resolve(s.destroy()));
        s.once("error", reject);
      }),
    ).rejects.toThrow(/ECONNREFUSED/);
    expect(fwd.upstreams.size).toBe(0);
    await expect(c.connect({ host: "10.0.3.1", port: 6379 })).rejects.toThrow(/closed/);
  });

  it("rejects an endpoint no pod has, and a wrong password, with clear messages", async () => {
    const c = new PortForwardConnector({
      namespace: "data",
      pods,
      forwarder: new LoopbackForwarder(servers),
      connect: { password: "wrong" },
    });
    try {
      await expect(c.connect({ host: "10.9.9.9", port: 6379 })).rejects.toThrow(
        "cannot reach 10.9.9.9:6379: no pod in namespace data has this address (port-forward connector)",
      );
      await expect(c.connect({ host: "10.0.3.2", port: 6379 })).rejects.toThrow(
        /cannot reach 10\.0\.3\.2:6379: authentication failed/,
      );
    } finally {
      await c.close();
    }
  });

  it("lists the pods again once when an endpoint is unknown (a pod that moved)", async () => {
    let calls = 0;
    const c = new PortForwardConnector({
      namespace: "data",
      pods: () => {
        calls++;
        return Promise.resolve(calls === 1 ? pods.slice(0, 1) : pods);
      },
      forwarder: new LoopbackForwarder(servers),
      connect: { password },
    });
    try {
      const r = await c.connect({ host: "10.0.3.2", port: 6379 });
      expect(await r.ping()).toBe("PONG");
      expect(calls).toBe(2);
    } finally {
      await c.close();
    }
  });
});
