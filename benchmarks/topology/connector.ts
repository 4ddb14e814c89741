/**
 * How to reach a Valkey node. Nodes announce themselves (CLUSTER NODES, INFO replication)
 * by the address they were configured with; a connector turns that announced endpoint into
 * a live client. `DirectConnector` dials the announced address as is (loopback tests, or a
 * program running inside the VPC); a Kubernetes port-forward connector can map the same
 * endpoints to forwarded local ports without the verifier or bootstrap knowing.
 */
import { Redis } from "ioredis";
import { endpointKey, type NodeEndpoint } from "./endpoint.js";

export interface ConnectOptions {
  /** The Valkey password; sent with AUTH over the connection, never logged. */
  password?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

export interface Connector {
  /** Opens a connected client to the node announced at `endpoint`. Rejects with a clear message if it cannot. */
  connect(endpoint: NodeEndpoint): Promise<Redis>;
  /** Releases anything the connector itself holds (tunnels, forwards). */
  close(): Promise<void>;
}

export class ConnectionError extends Error {
  constructor(
    readonly endpoint: string,
    message: string,
  ) {
    super(`cannot reach ${endpoint}: ${message}`);
    this.name = "ConnectionError";
  }
}

/** Opens an ioredis client to host:port and waits for it to be ready (AUTH done). */
export async function openClient(host: string, port: number, label: string, opts: ConnectOptions): Promise<Redis> {
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: opts.connectTimeoutMs ?? 3000,
    commandTimeout: opts.commandTimeoutMs ?? 5000,
    enableReadyCheck: false,
  });
  client.on("error", () => {
    /* surfaced through the promise below or the failing command */
  });
  try {
    await client.connect();
    // AUTH explicitly (not ioredis' password option) so a rejected password surfaces here,
    // as a clear error, rather than as a closed stream on the first command. These clients
    // never reconnect (retryStrategy null), so there is no re-AUTH to lose.
    if (opts.password !== undefined) await client.call("AUTH", opts.password);
    else await client.ping();
  } catch (err) {
    client.disconnect();
    const msg = (err as Error).message;
    throw new ConnectionError(label, /WRONGPASS|NOAUTH|invalid password/i.test(msg) ? `authentication failed (${msg})` : msg);
  }
  return client;
}

export class DirectConnector implements Connector {
  constructor(private readonly opts: ConnectOptions = {}) {}

  connect(endpoint: NodeEndpoint): Promise<Redis> {
    return openClient(endpoint.host, endpoint.port, endpointKey(endpoint), this.opts);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Caches one client per endpoint over a connector; `closeAll` quits them all. */
export class ConnectionPool {
  private readonly clients = new Map<string, Promise<Redis>>();

  constructor(readonly connector: Connector) {}

  get(endpoint: NodeEndpoint): Promise<Redis> {
    const key = endpointKey(endpoint);
    let client = this.clients.get(key);
    if (!client) {
      client = this.connector.connect(endpoint);
      this.clients.set(key, client);
      // A failed connect must not poison the cache for a later retry.
      client.catch(() => this.clients.delete(key));
    }
    return client;
  }

  async closeAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(
      all.map(async (p) => {
        try {
          const c = await p;
          c.disconnect();
        } catch {
          /* never connected */
        }
      }),
    );
  }
}
