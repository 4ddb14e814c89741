/**
 * Live collection: asks real nodes, through a Connector, for the replies the pure analyses
 * read. Discovery starts at the first seed that answers; every discovered node is then
 * asked concurrently. A node that cannot be reached is recorded (its `error`), not thrown.
 */
import type { Redis } from "ioredis";
import { ConnectionError, type Connector } from "../topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../topology/info.js";
import type { ClusterCapture, ClusterNodeCapture } from "./cluster-analysis.js";
import { digestClusterNodes, parseClusterNodes } from "../topology/cluster-nodes-parser.js";
import type { NodeCapture } from "./analysis-common.js";
import { listedReplicas, type ReplicationCapture } from "./replication-analysis.js";

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One client per announced endpoint, all closed by `close()`. */
class Session {
  private readonly clients = new Map<string, Promise<Redis>>();
  constructor(private readonly connector: Connector) {}

  get(endpoint: NodeEndpoint): Promise<Redis> {
    const key = endpointKey(endpoint);
    let c = this.clients.get(key);
    if (c === undefined) {
      c = this.connector.connect(endpoint);
      c.catch(() => undefined); // observed by the caller
      this.clients.set(key, c);
    }
    return c;
  }

  /** Registers an already-open client under another key (the seed's announced address). */
  alias(endpoint: NodeEndpoint, client: Redis): void {
    const key = endpointKey(endpoint);
    if (!this.clients.has(key)) this.clients.set(key, Promise.resolve(client));
  }

  async close(): Promise<void> {
    const all = [...new Set(this.clients.values())];
    this.clients.clear();
    await Promise.all(
      all.map(async (p) => {
        try {
          (await p).disconnect();
        } catch {
          /* never connected */
        }
      }),
    );
  }
}

/** Connects to the first seed that answers; throws ConnectionError naming every failure. */
async function firstSeed(
  session: Session,
  seeds: readonly NodeEndpoint[],
): Promise<{ seed: NodeEndpoint; client: Redis }> {
  const errors: ConnectionError[] = [];
  for (const seed of seeds) {
    try {
      return { seed, client: await session.get(seed) };
    } catch (err) {
      errors.push(err instanceof ConnectionError ? err : new ConnectionError(endpointKey(seed), message(err)));
    }
  }
  if (errors.length === 1) throw errors[0] as ConnectionError;
  if (errors.length === 0) throw new ConnectionError("(no seed)", "no seed given");
  const kind = errors.every((e) => e.kind === "not-valkey") ? "not-valkey" : "unreachable";
  throw new ConnectionError(
    seeds.map(endpointKey).join(","),
    `no seed answered: ${errors.map((e) => e.message.replace(/^cannot reach /, "")).join("; ")}`,
    kind,
  );
}

async function captureNode<T extends NodeCapture>(
  session: Session,
  endpoint: NodeEndpoint,
  ask: (c: Redis, capture: T) => Promise<void>,
): Promise<T> {
  const capture = { address: endpointKey(endpoint) } as T;
  try {
    await ask(await session.get(endpoint), capture);
  } catch (err) {
    capture.error = message(err).replace(/^cannot reach [^:]+:\d+: /, "");
  }
  return capture;
}

export interface Collected<T> {
  capture: T;
  /** Every endpoint discovered, for the zone lookup. */
  endpoints: NodeEndpoint[];
}

export async function collectCluster(
  connector: Connector,
  seeds: readonly NodeEndpoint[],
  countKeys: boolean,
): Promise<Collected<ClusterCapture>> {
  const session = new Session(connector);
  try {
    const { seed, client } = await firstSeed(session, seeds);
    const seedKey = endpointKey(seed);
    let seedClusterNodes: string;
    let seedClusterInfo: string;
    try {
      [seedClusterNodes, seedClusterInfo] = (await Promise.all([
        client.call("CLUSTER", "NODES"),
        client.call("CLUSTER", "INFO"),
      ])) as [string, string];
    } catch (err) {
      return {
        capture: { seed: seedKey, seedAddress: seedKey, seedError: message(err), nodes: [] },
        endpoints: [seed],
      };
    }
    const entries = parseClusterNodes(seedClusterNodes).nodes;
    const self = entries.find((n) => n.myself);
    const seedEndpoint = self?.endpoint ?? seed;
    session.alias(seedEndpoint, client);
    const seedAddress = endpointKey(seedEndpoint);
    const targets = new Map<string, { endpoint: NodeEndpoint; primary: boolean }>();
    for (const n of entries) {
      const endpoint = n.myself ? seedEndpoint : n.endpoint;
      if (endpoint !== undefined) targets.set(endpointKey(endpoint), { endpoint, primary: n.role === "primary" });
    }
    const nodes = await Promise.all(
      [...targets.values()].map(({ endpoint, primary }) =>
        captureNode<ClusterNodeCapture>(session, endpoint, async (c, cap) => {
          const isSeed = endpointKey(endpoint) === seedAddress;
          const [info, view, repl, dbsize] = await Promise.all([
            isSeed ? seedClusterInfo : (c.call("CLUSTER", "INFO") as Promise<string>),
            isSeed ? seedClusterNodes : (c.call("CLUSTER", "NODES") as Promise<string>),
            c.info("replication"),
            primary && countKeys ? c.dbsize() : undefined,
          ]);
          cap.clusterInfo = info;
          cap.clusterNodes = digestClusterNodes(view);
          cap.replicationInfo = repl;
          if (dbsize !== undefined) cap.dbsize = dbsize;
        }),
      ),
    );
    return {
      capture: { seed: seedKey, seedAddress, seedClusterNodes, seedClusterInfo, nodes },
      endpoints: [...targets.values()].map((t) => t.endpoint),
    };
  } finally {
    await session.close();
  }
}

export async function collectReplication(
  connector: Connector,
  seeds: readonly NodeEndpoint[],
  countKeys: boolean,
): Promise<Collected<ReplicationCapture>> {
  const session = new Session(connector);
  try {
    const { seed, client } = await firstSeed(session, seeds);
    const seedKey = endpointKey(seed);
    const seedReplicationInfo = await client.info("replication");
    const info = parseInfo(seedReplicationInfo);
    if (info.get("role") !== "master") {
      return { capture: { seed: seedKey, seedReplicationInfo, replicas: [] }, endpoints: [seed] };
    }
    const byKey = new Map<string, NodeEndpoint>();
    for (const r of listedReplicas(info)) byKey.set(r.address, r.endpoint);
    const extraSeeds: string[] = [];
    for (const s of seeds) {
      const key = endpointKey(s);
      if (key === seedKey || byKey.has(key)) continue;
      byKey.set(key, s);
      extraSeeds.push(key);
    }
    const [dbsize, replicas] = await Promise.all([
      countKeys ? client.dbsize() : Promise.resolve(undefined),
      Promise.all(
        [...byKey.values()].map((endpoint) =>
          captureNode<NodeCapture>(session, endpoint, async (c, cap) => {
            cap.replicationInfo = await c.info("replication");
          }),
        ),
      ),
    ]);
    const capture: ReplicationCapture = { seed: seedKey, seedReplicationInfo, replicas, extraSeeds };
    if (dbsize !== undefined) capture.seedDbsize = dbsize;
    return { capture, endpoints: [seed, ...byKey.values()] };
  } finally {
    await session.close();
  }
}
