/**
 * The partition fault, the same in both modes (replication-target.ts, cluster-target.ts): cut the
 * primary off from its peers (partition.ts) for `holdMs`, watch from the harness (127.0.0.1,
 * never cut) when it stops taking writes, heal, then watch for the old primary to come back as a
 * replica. Whether it must is the verifier's call (run-drill.ts waits for it): after a failover,
 * a member still answering role:master is a missing replica; a partition shorter than the
 * failover (a Sentinel election lost to a split vote is retried only after 2 × failover-timeout)
 * heals with the old primary still primary, and nothing to demote. The harness's probe connection
 * is a client: it reaches the isolated primary throughout.
 */
import { Redis } from "ioredis";
import { parseInfo } from "../../core/topology/info.js";
import { sleep } from "../../core/util/poll-until.js";
import { Partition, type PartitionEnd } from "./partition.js";

export interface PartitionFaultOptions {
  iptables: string;
  /** The primary to cut off: its address, client port (the probe's) and every port it listens on. */
  isolated: PartitionEnd & { port: number };
  /** Every process it must not reach: Sentinels and replicas, or the other cluster members. */
  peers: readonly PartitionEnd[];
  holdMs: number;
  password: string;
}

export interface PartitionFault {
  partition: Partition;
  /** Resolves once the rules are removed (after holdMs). */
  restored: Promise<void>;
  /** Resolves once the old primary answered ROLE slave after the heal, or stop() was called. */
  settled: Promise<void>;
  /** When the probe first saw the isolated primary refuse writes (Date.now()). */
  fencedAt: () => number | undefined;
  /** When the last poll the isolated primary answered as still taking writes was sent (Date.now()). */
  openAskedAt: () => number | undefined;
  /** When the old primary first answered ROLE slave after the heal (Date.now()). */
  demotedAt: () => number | undefined;
  /** Stops watching for the demotion (the drill is over). */
  stop: () => void;
  /** Heals at once (a target stopped early) and stops the probe. */
  abort: () => void;
}

function probeClient(host: string, port: number, password: string): Redis {
  const c = new Redis({
    host,
    port,
    password,
    lazyConnect: true,
    connectTimeout: 500,
    commandTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 100,
  });
  c.on("error", () => undefined);
  return c;
}

/** Why the node refuses writes now ("NOREPLICAS" / "CLUSTERDOWN"), undefined when it takes them. */
export async function writeRefusal(c: Redis, minReplicasToWrite: number): Promise<string | undefined> {
  const info = parseInfo(await c.info("replication"));
  if (info.get("role") !== "master") return undefined;
  const good = info.get("min_slaves_good_slaves");
  if (minReplicasToWrite >= 1 && good !== undefined && Number(good) < minReplicasToWrite) return "NOREPLICAS";
  const cluster = parseInfo(await c.info("cluster")).get("cluster_enabled") === "1";
  if (cluster && /cluster_state:fail/.test(String(await c.call("CLUSTER", "INFO")))) return "CLUSTERDOWN";
  return undefined;
}

export async function injectPartition(o: PartitionFaultOptions): Promise<PartitionFault> {
  const probe = probeClient(o.isolated.host, o.isolated.port, o.password);
  await probe.connect();
  // Below min-replicas-to-write good replicas, INFO's min_slaves_good_slaves means NOREPLICAS.
  const minReplicasToWrite = Number(((await probe.call("CONFIG", "GET", "min-replicas-to-write")) as string[])[1]);
  let fencedAt: number | undefined;
  let openAskedAt: number | undefined;
  let demotedAt: number | undefined;
  let watching = true;
  const watch = (async () => {
    while (watching && fencedAt === undefined) {
      const asked = Date.now();
      const why = await writeRefusal(probe, minReplicasToWrite).catch(() => null);
      if (why === undefined) openAskedAt = asked;
      else if (why !== null && watching) fencedAt = Date.now();
      await sleep(100);
    }
  })();
  let partition: Partition;
  try {
    partition = await Partition.cut(o.iptables, o.isolated, o.peers);
  } catch (err) {
    watching = false;
    await watch;
    probe.disconnect();
    throw err;
  }
  let settling = true;
  const restored = (async () => {
    try {
      await sleep(o.holdMs);
    } finally {
      watching = false;
      await partition.lift();
    }
    await watch;
  })();
  const settled = (async () => {
    await restored.catch(() => undefined);
    while (settling) {
      const role = await probe.call("ROLE").then(
        (r) => String((r as unknown[])[0]),
        () => "no answer",
      );
      if (role === "slave") {
        demotedAt = Date.now();
        break;
      }
      await sleep(250);
    }
    probe.disconnect();
  })();
  return {
    partition,
    restored,
    settled,
    fencedAt: () => fencedAt,
    openAskedAt: () => openAskedAt,
    demotedAt: () => demotedAt,
    stop: () => (settling = false),
    abort: () => {
      watching = false;
      settling = false;
      partition.heal();
    },
  };
}
