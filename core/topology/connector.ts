/**
 * How to reach a Valkey node. Nodes announce themselves (CLUSTER NODES, INFO replication)
 * by the address they were configured with; a connector turns that announced endpoint into
 * a live client. `DirectConnector` dials the announced address as is (loopback tests, or a
 * program running inside the VPC); a Kubernetes port-forward connector can map the same
 * endpoints to forwarded local ports without the verifier or bootstrap knowing.
 */
import { Redis } from "ioredis";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { probeProtocol } from "./protocol-probe.js";

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
    /** "not-valkey": something answered, but not a Valkey/Redis server. */
    readonly kind: "unreachable" | "not-valkey" = "unreachable",
  ) {
    super(
      kind === "not-valkey"
        ? `${endpoint} is not a Valkey/Redis server: ${message}`
        : `cannot reach ${endpoint}: ${message}`,
    );
    this.name = "ConnectionError";
  }
}

/**
 * The error for a connect or PING/AUTH that failed (`cause`) or answered oddly (`reply`): asks the
 * port itself (protocol-probe.ts) so a non-Valkey listener is named as such.
 */
async function explainFailure(host: string, port: number, label: string, cause: string): Promise<ConnectionError> {
  if (/WRONGPASS|NOAUTH|invalid password/i.test(cause))
    return new ConnectionError(label, `authentication failed (${cause})`);
  const probe = await probeProtocol(host, port);
  if (probe.kind === "other")
    return new ConnectionError(label, `it answered '${probe.first}' to PING (${cause})`, "not-valkey");
  if (probe.kind === "silent" && /timed out/i.test(cause)) {
    return new ConnectionError(
      label,
      `no reply to PING (${cause}): a stopped or frozen server, or not a Valkey/Redis server`,
    );
  }
  return new ConnectionError(label, cause);
}

/** How long a connect may take unless told. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;
/** How long a command (AUTH, PING, INFO, …) may wait for its reply unless told. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

/** Opens an ioredis client to host:port and waits for it to be ready (AUTH done). */
export async function openClient(host: string, port: number, label: string, opts: ConnectOptions): Promise<Redis> {
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeout: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    enableReadyCheck: false,
    // No CLIENT SETINFO on connect: before AUTH it only earns NOAUTH, and on a frozen server the
    // connect waited a whole command timeout for it (measured: 5.0 s connect + 5.0 s AUTH + 1.5 s
    // probe = 11.5 s to call a SIGSTOPped primary unreachable; 6.5 s without it).
    disableClientInfo: true,
  });
  client.on("error", () => {
    /* surfaced through the promise below or the failing command */
  });
  try {
    await client.connect();
    // AUTH explicitly (not ioredis' password option) so a rejected password surfaces here,
    // as a clear error, rather than as a closed stream on the first command. These clients
    // never reconnect (retryStrategy null), so there is no re-AUTH to lose.
    const reply = opts.password !== undefined ? await client.call("AUTH", opts.password) : await client.ping();
    const expected = opts.password !== undefined ? "OK" : "PONG";
    // The reply is not quoted: an echoing listener would echo the password back.
    if (reply !== expected)
      throw new Error(`the reply to ${opts.password !== undefined ? "AUTH" : "PING"} was not ${expected}`);
  } catch (err) {
    client.disconnect();
    throw await explainFailure(host, port, label, (err as Error).message);
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
