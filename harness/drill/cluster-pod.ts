/**
 * How a local cluster member starts, as its pod does (cluster-target.ts): the pod's own files
 * and command (pod/cluster-member.ts, the definition the manifests mount) written into its dir,
 * with only the local differences as options: its directories, its current 127.0.0.x and ports,
 * the conf lines of pod/local-conf.ts and the drills' shorter script clocks (unless deployedScriptClocks). Its
 * data dir is kept across restarts; it announces its stable hostname, IP and zone.
 * Its outgoing connections (cluster bus, replication link) come from its own address
 * (`bind-source-addr`, cluster_legacy.c and replication.c bind it), as a pod's from its pod IP:
 * the partition fault's rules name it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { openClient } from "../../core/topology/connector.js";
import { sleep } from "../../core/util/poll-until.js";
import type { ValkeyConfig } from "../../config/types.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { launchPod } from "../local/pod-files.js";
import { freePort } from "../local/ports.js";
import type { LaunchCommand, LaunchContext } from "../local/valkey-process.js";
import { clusterNodesOf } from "../../core/drill/load-shards.js";
import { clusterClient } from "../../core/drill/load.js";
import { readInBatches } from "../../core/drill/target.js";
import type { Fault } from "../../vocabulary/faults.js";

export interface ClusterPodSpec {
  name: string;
  hostname: string;
  zone: string;
  host: string;
  port: number;
  busPort: number;
  dataDir: string;
}

/**
 * The loopback address number `n` stands for: 127.0.0.n below 256, then on through 127.0.1.0, … (all of 127/8 is
 * loopback on Linux), so a ladder of 200 members and their moved addresses fit.
 */
export function loopbackHost(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 0xfffffe)
    throw new Error(`no loopback address numbered ${n} (1 … 16777214)`);
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/**
 * `count` members `member-<i>` on loopbackHost(base + i) (127.0.0.<base + i> while that is below 256), zones
 * round-robin, each with free ports and a data dir under `baseDir`.
 */
export async function clusterPodSpecs(
  count: number,
  base: number,
  zones: readonly string[],
  baseDir: string,
): Promise<(ClusterPodSpec & { index: number })[]> {
  const specs: (ClusterPodSpec & { index: number })[] = [];
  for (let i = 0; i < count; i++) {
    const host = loopbackHost(base + i);
    specs.push({
      index: i,
      name: `member-${i}`,
      hostname: `member-${i}.valkey-headless.drill`,
      zone: zones[i % zones.length] as string,
      host,
      port: await freePort(host),
      busPort: await freePort(host),
      dataDir: join(baseDir, `member-${i}-data`),
    });
  }
  return specs;
}

export interface ClusterPodEnv {
  /** The stack's `valkey` section the members run (valkey.conf). @default the embedded default stack config's */
  valkey?: ValkeyConfig;
  /** cluster-node-timeout: the local failure detection the drill was asked for. */
  nodeTimeoutMs: number;
  passwordFile: string;
  /** heal.sh's VALKEY_HEAL_HOSTS_FILE (the local stand-in for pod DNS). */
  hostsFile: string;
  /** What every local pod's environment holds (pod-files.ts localPodEnv): PATH, VALKEY_CLI, the cli's password. */
  cliEnv: Record<string, string>;
  /** Whether the pod carries its zone label (ClusterTargetOptions.zoneLabel). */
  zoneLabel: boolean;
  /** The scripts' deployed clocks instead of the drills' shorter ones (ClusterTargetOptions.deployedScriptClocks). */
  deployedScriptClocks?: boolean;
}

/** The drills' script clocks: shorter than the deployed ones, so a drill heals within its recovery timeout. */
const DRILL_SCRIPT_CLOCKS = {
  heal: { intervalSeconds: 1, deadlineSeconds: 120 },
  rejoin: { intervalSeconds: 1, deadlineSeconds: 120, gateDeadlineSeconds: 60 },
  failback: { intervalSeconds: 1, confirmRounds: 2, cooldownSeconds: 5 },
  preStop: { timeoutSeconds: 20 },
};

/** The launch (LocalFleet.start) of member `p`: writes its conf and scripts into its dir, runs start.sh. */
export function clusterPodLaunch(p: ClusterPodSpec, e: ClusterPodEnv): (ctx: LaunchContext) => LaunchCommand {
  return ({ dir, logfile }) => {
    const runDir = join(dir, "run");
    mkdirSync(p.dataDir, { recursive: true });
    const pod = clusterMemberPod({
      valkey: e.valkey ?? defaultValkeyConfig(),
      auth: true,
      configDir: dir,
      runDir,
      dataDir: p.dataDir,
      passwordFile: e.passwordFile,
      port: p.port,
      busPort: p.busPort,
      localHost: p.host,
      // Endpoint type `ip`, not the deployed `hostname`: with hostnames mapped to 127.0.0.x by the
      // load client (natMap, standing in for pod DNS) the `primary` drill lost 21-116 acknowledged
      // writes outside its bound in 6 of 8 runs (0 of 4 with `ip`); the cause (the stand-in name
      // mapping or the server) is not found yet, so the local drills keep what they measured before.
      bind: p.host,
      local: { logfile, clusterNodeTimeoutMs: e.nodeTimeoutMs, bindSourceAddr: p.host, clusterEndpointType: "ip" },
      ...(e.deployedScriptClocks === true ? {} : DRILL_SCRIPT_CLOCKS),
    });
    return launchPod(p.name, pod, dir, {
      ...e.cliEnv,
      POD_NAME: p.name,
      VALKEY_ANNOUNCE_HOST: p.hostname,
      VALKEY_ANNOUNCE_IP: p.host,
      // The downward API gives "" for a label the pod does not carry (Kubernetes < 1.35 has no zone label on pods).
      VALKEY_AVAILABILITY_ZONE: e.zoneLabel ? p.zone : "",
      VALKEY_HEAL_HOSTS_FILE: e.hostsFile,
    });
  };
}

/**
 * Polls the CLUSTER NODES of `survivors()` every 100 ms until one flags a node of `killedIds`
 * `fail?`/`fail`: when (Date.now()) is the detection time of a drill.
 */
export function watchFailMarks(
  survivors: () => readonly { host: string; port: number }[],
  killedIds: readonly string[],
  password: string,
): { detectedAt: () => number | undefined; stop: () => void } {
  let at: number | undefined;
  let stopped = false;
  const ids = new Set(killedIds);
  void (async () => {
    while (!stopped && at === undefined) {
      for (const p of survivors()) {
        if (stopped || at !== undefined) break;
        try {
          const nodes = await clusterNodesOf(p.host, p.port, password, 300, 500);
          if (nodes.some((n) => ids.has(n.id) && (n.failed || n.pfail))) at ??= Date.now();
        } catch {
          /* a member that is down or restarting */
        }
      }
      await sleep(100);
    }
  })();
  return { detectedAt: () => at, stop: () => (stopped = true) };
}

/** `CLUSTER FAILOVER` (coordinated, not FORCE) on the replica at host:port. */
export async function clusterFailover(p: { host: string; port: number }, password: string): Promise<void> {
  const c = await openClient(p.host, p.port, `${p.host}:${p.port}`, { password });
  try {
    await c.call("CLUSTER", "FAILOVER");
  } finally {
    c.disconnect();
  }
}

/** CLUSTER MYID of the member at host:port (a member restarted without its volume has a new one). */
export async function clusterMyId(p: { host: string; port: number }, password: string): Promise<string> {
  const c = new Redis({ host: p.host, port: p.port, password, lazyConnect: true, maxRetriesPerRequest: 1 });
  c.on("error", () => undefined);
  try {
    return String(await c.call("CLUSTER", "MYID"));
  } finally {
    c.disconnect();
  }
}

/**
 * Per key through the slot-aware client (load.ts clusterClient); a key whose slot no node serves is left out (unknown).
 */
export async function readBackCluster(
  seeds: { host: string; port: number }[],
  password: string,
  resolve: (name: string) => string | undefined,
  keys: readonly string[],
): Promise<Map<string, string | undefined>> {
  const c = clusterClient(seeds, password, 5000, resolve, true);
  try {
    // Keys span every slot: one GET each (a pipeline must stay within one slot).
    return await readInBatches(keys, (batch) => Promise.all(batch.map((k) => c.get(k).catch(() => undefined))), true);
  } finally {
    c.disconnect();
  }
}

/**
 * The members a fault hits (their shards are the affected ones); `all` and `upgrade` hit every shard, so none is
 * marked.
 */
export function faultVictims<P extends { zone: string }>(
  fault: Fault,
  o: { primary: P; replica: P; lostVolume: P; pods: readonly P[] },
): P[] {
  if (fault === "all" || fault === "upgrade") return [];
  if (fault === "replica") return [o.replica];
  if (fault === "lost-volume") return [o.lostVolume];
  if (fault === "zone") return o.pods.filter((p) => p.zone === o.primary.zone);
  return [o.primary];
}
