/**
 * A `Connector` that reaches pods through the API server's port-forward, for a program that
 * runs outside the cluster network (`checks.connector: port-forward`). Each announced endpoint
 * (pod IP:port or a pod DNS name:port) is mapped to its pod; one local TCP listener on
 * 127.0.0.1:0 per pod and port forwards every accepted connection through a `Forwarder`, and
 * ioredis connects to that listener. `close()` tears every listener and connection down.
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { PortForward, type KubeConfig } from "@kubernetes/client-node";
import type { Redis } from "ioredis";
import { ConnectionError, openClient, type ConnectOptions, type Connector } from "../../core/topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { normalHost, podsByHost, type AddressOptions } from "./pod-addresses.js";
import type { DiscoveredPod } from "./pod-discovery.js";

export interface ForwardTarget {
  namespace: string;
  pod: string;
  port: number;
}

/** Pipes one accepted local socket to a pod's port; resolves once the tunnel is open. */
export interface Forwarder {
  forward(target: ForwardTarget, socket: Socket): Promise<void>;
}

interface TunnelSocket {
  on(event: "close", listener: () => void): unknown;
  close(): void;
}

/** The real forwarder: client-node's PortForward (a WebSocket to the API server per connection). */
export class KubePortForwarder implements Forwarder {
  private readonly pf: PortForward;

  constructor(kc: KubeConfig) {
    this.pf = new PortForward(kc);
  }

  async forward(t: ForwardTarget, socket: Socket): Promise<void> {
    // The WebSocket (isomorphic-ws) type does not resolve here: use the two members we need.
    const ws = (await this.pf.portForward(t.namespace, t.pod, [t.port], socket, null, socket)) as unknown;
    const live = (typeof ws === "function" ? (ws as () => unknown)() : ws) as TunnelSocket | null;
    live?.on("close", () => socket.end());
    socket.once("close", () => live?.close());
  }
}

export interface PortForwardConnectorOptions extends AddressOptions {
  /** The release's pods, or how to list them (listed again once when an endpoint matches none). */
  pods: readonly DiscoveredPod[] | (() => Promise<readonly DiscoveredPod[]>);
  forwarder: Forwarder;
  /** Password and timeouts for the clients. */
  connect?: ConnectOptions;
}

interface Listener {
  server: Server;
  port: number;
}

export class PortForwardConnector implements Connector {
  private byHost: Map<string, DiscoveredPod> | undefined;
  private readonly listeners = new Map<string, Promise<Listener>>();
  private readonly sockets = new Set<Socket>();
  private closed = false;

  constructor(private readonly o: PortForwardConnectorOptions) {}

  private async load(): Promise<Map<string, DiscoveredPod>> {
    const pods = typeof this.o.pods === "function" ? await this.o.pods() : this.o.pods;
    this.byHost = podsByHost(pods, this.o);
    return this.byHost;
  }

  /** The pod an announced endpoint belongs to; rejects naming the endpoint when none matches. */
  async resolve(endpoint: NodeEndpoint): Promise<ForwardTarget> {
    const host = normalHost(endpoint.host);
    let pod = (this.byHost ?? (await this.load())).get(host);
    if (pod === undefined && typeof this.o.pods === "function") pod = (await this.load()).get(host);
    if (pod === undefined) {
      throw new ConnectionError(
        endpointKey(endpoint),
        `no pod in namespace ${this.o.namespace} has this address (port-forward connector)`,
      );
    }
    return { namespace: this.o.namespace, pod: pod.name, port: endpoint.port };
  }

  /** Local port of the listener forwarding to `endpoint`'s pod, opened on first use. */
  async localPort(endpoint: NodeEndpoint): Promise<number> {
    const target = await this.resolve(endpoint);
    const key = `${target.pod}:${target.port}`;
    let l = this.listeners.get(key);
    if (l === undefined) {
      l = this.listen(target);
      this.listeners.set(key, l);
      l.catch(() => this.listeners.delete(key));
    }
    return (await l).port;
  }

  private listen(target: ForwardTarget): Promise<Listener> {
    if (this.closed) return Promise.reject(new Error("the port-forward connector is closed"));
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
      socket.on("error", () => socket.destroy());
      this.o.forwarder.forward(target, socket).catch(() => socket.destroy());
    });
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port }));
    });
  }

  async connect(endpoint: NodeEndpoint): Promise<Redis> {
    const port = await this.localPort(endpoint);
    return openClient("127.0.0.1", port, endpointKey(endpoint), this.o.connect ?? {});
  }

  /** Number of open local listeners (for tests and progress lines). */
  get listenerCount(): number {
    return this.listeners.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.listeners.values()];
    this.listeners.clear();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await Promise.all(
      all.map(async (p) => {
        const l = await p.catch(() => undefined);
        if (l !== undefined) await new Promise<void>((resolve) => l.server.close(() => resolve()));
      }),
    );
  }
}
