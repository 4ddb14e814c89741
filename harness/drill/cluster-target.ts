/**
 * The cluster drill target: P × (1 + M) members run as pods run them (the rendered start.sh with
 * heal.sh and the AZ failback loop), each on its own 127.0.0.x, data dir kept across restarts;
 * formed by the AZ-aware bootstrap. A hosts file (heal.sh's VALKEY_HEAL_HOSTS_FILE) and the load
 * client's connector (load.ts resolvingConnector) stand in for pod DNS, so the `all` fault can
 * bring every member back on a NEW address. Faults: docs/drills.md. Detection: CLUSTER NODES of the survivors every 100
 * ms.
 */
import { announceZones } from "../../core/bootstrap/announce-zones.js";
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { bootstrapCluster } from "../../core/bootstrap/cluster-bootstrap.js";
import { localMember } from "../local/local-cluster.js";
import { localPodEnv } from "../local/pod-files.js";
import { killHard } from "../local/sentinel-topology.js";
import { freePort } from "../local/ports.js";
import { LocalFleet, type ValkeyProcess } from "../local/valkey-process.js";
import { resolvePreviousServer } from "../../benchmarks/run/binaries.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { sleep } from "../../core/util/poll-until.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import type { Fault } from "../../vocabulary/faults.js";
import { clusterNodesOf, loadShardsOf, type ClusterNodes } from "../../core/drill/load-shards.js";
import {
  clusterFailover,
  clusterPodLaunch,
  clusterPodSpecs,
  clusterMyId,
  loopbackHost,
  faultVictims,
  readBackCluster,
  watchFailMarks,
  type ClusterPodSpec,
} from "./cluster-pod.js";
import type { LoadShard } from "../../core/drill/writers.js";
import { clusterClient, plainRedis, type LoadClient } from "../../core/drill/load.js";
import { Partition, partitionCapability } from "./partition.js";
import { injectPartition, type PartitionFault } from "./partition-fault.js";
import type { DurabilityConfig } from "../../core/drill/bounds.js";
import { readAofInfo } from "../../core/drill/aof-at-kill.js";
import type { ClientSettings } from "../../core/drill/client-settings.js";
import { valkeyPyClusterSpec, type ValkeyPySpec } from "../../core/drill/valkey-py-stream.js";
import type { ValkeyConfig } from "../../config/types.js";
import { reapBackgroundScripts } from "./reap-scripts.js";
import { PRESTOP_LOG_FILE, PRESTOP_SCRIPT_KEY } from "../../pod/paths.js";
import { injectUpgrade } from "./upgrade-fault.js";
import {
  crashRestartDelay,
  freezeHoldMs,
  partitionHoldMs,
  readDurability,
  startedOrStopped,
  type DrillTarget,
  type DrillTimings,
  type FaultHandle,
} from "../../core/drill/target.js";

export interface ClusterTargetOptions extends DrillTimings {
  primaries: number;
  replicasPerPrimary: number;
  zones: readonly string[];
  password: string;
  baseDir?: string;
  /** The stack's `valkey` section the members run (valkey.conf). @default the embedded default stack config's */
  valkey?: ValkeyConfig;
  /**
   * The first member's address number (cluster-pod.ts loopbackHost: 127.0.0.<n> below 256); the `all` fault moves
   * the members up by max(50, their count) and back. @default 140
   */
  hostBase?: number;
  /**
   * The valkey-server the members start with (their image's; the `upgrade` fault rolls them to the current one).
   * @default resolveBinaries()'s
   */
  serverPath?: string;
  /**
   * Whether the members get their zone as pods do from Kubernetes 1.35 (the zone label, VALKEY_AVAILABILITY_ZONE).
   * false: as on EKS 1.33/1.34 and kube:local, no label; the bootstrap sets each member's availability-zone with
   * CONFIG SET (as the ClusterBootstrap step does) and the failback loop keeps it on the data volume. @default true
   */
  zoneLabel?: boolean;
  /** The bootstrap's bound (bootstrapCluster timeoutMs): a ladder of 100 primaries needs more. @default 60000 */
  bootstrapTimeoutMs?: number;
  /**
   * The pod scripts' deployed clocks (heal every 2 s, failback every 10 s, …: their definitions' defaults) instead
   * of the drills' shorter ones (cluster-pod.ts DRILL_SCRIPT_CLOCKS). @default false
   */
  deployedScriptClocks?: boolean;
  /**
   * Whether the stand-in for DNS lists the peers at the first start, as the headless Service does
   * (publishNotReadyAddresses). false: an empty hosts file until the bootstrap has formed the cluster, so
   * rejoin.sh's gate asks nobody. Every first start's gate asks every listed peer for CLUSTER NODES (it looks for an
   * old entry under its hostname): N asks per pod, but N² valkey-cli processes on one host, which at 200 members
   * kept one from starting within 200 s (the scale ladder; 2026-12-01). @default true
   */
  firstStartPeersListed?: boolean;
  /**
   * How long a member's start (first or restart) may take to answer PING as its own server. The scale ladder's
   * restart of 200 members at once, their heal.sh asking each other (N² valkey-cli on one host), kept member-0 from
   * answering within 200 s (bench:scale 2026-12-01, load average 367). @default max(90 s, 1 s per member)
   */
  startTimeoutMs?: number;
  /**
   * The iptables (root) by which the `all` fault drops every packet to the addresses the members leave, as a deleted
   * pod's IP on EKS answers nothing. Without it loopback refuses a connect at once, and each server's cluster cron
   * dials every peer without a link every 100 ms: 200 servers re-dialling 199 refused addresses took more CPU than
   * this 2-core machine has (1.7 % of a core per server, 0.3–0.4 % dropped; docs/measurements.md 2026-12-03). Not
   * beside the partition fault (one iptables chain per process). @default undefined: the addresses left refuse
   */
  blackholeLeftAddresses?: string;
  /**
   * The members' niceness increment (StartOptions.nice), for a ladder of hundreds on two cores: their own loops kept
   * the Node process that starts and measures them at one share among ~370 runnable, so spawning 200 members took
   * 110 s and their answers were seen up to 190 s after their logs said ready (docs/measurements.md 2026-12-04).
   * Niced alike, the members keep their shares among themselves. @default 0
   */
  membersNice?: number;
}

interface Pod extends ClusterPodSpec {
  /** Its ordinal (`member-<index>`): the `all` fault moves it to a new address from it. */
  index: number;
  nodeId: string;
  proc: ValkeyProcess | undefined;
}

/** A member as fault descriptions name it. */
const label = (p: Pod): string => `${p.name} (${p.host}:${p.port}, zone ${p.zone})`;

/** The survivors' watch for fail marks on the killed members (ClusterTarget.watch). */
interface FailWatch {
  detectedAt: () => number | undefined;
  stop: () => void;
}

/** Members SIGKILLed: when they run again, and the watch for their fail marks. */
interface Killed {
  restored: Promise<void>;
  w: FailWatch;
}

/** The handle of a kill fault; `detectionNote` when no survivor can mark the failure. */
function killedHandle(description: string, { restored, w }: Killed, detectionNote?: string): FaultHandle {
  return {
    description,
    restored,
    detectedAt: w.detectedAt,
    ...(detectionNote === undefined ? {} : { detectionNote }),
    stopWatching: w.stop,
  };
}

export class ClusterTarget implements DrillTarget {
  readonly mode = "cluster" as const;
  readonly describe: string;
  readonly pods: Pod[] = [];
  /** Whose volume the `lost-volume` fault deletes. @default "primary" */
  lostVolumeOf: "primary" | "replica" = "primary";
  private readonly fleet: LocalFleet;
  private readonly hostsFile: string;
  private readonly passwordFile: string;
  /** The last partition fault (healed by stop() if still in place). */
  partitioned: PartitionFault | undefined;
  /** The valkey-server the next (re)start runs. */
  private serverPath: string | undefined;
  /** Whether the `all` fault has moved the members off their first addresses (the next one moves them back). */
  private moved = false;
  /** The addresses the last `all` fault left, dropped (blackholeLeftAddresses). */
  private blackholed: Partition | undefined;

  private constructor(private readonly o: ClusterTargetOptions) {
    this.serverPath = o.serverPath;
    this.fleet = new LocalFleet(o.baseDir);
    this.hostsFile = join(this.fleet.baseDir, "hosts");
    this.passwordFile = join(this.fleet.baseDir, "secret", "password");
    this.describe = `cluster: ${o.primaries} primaries × ${o.replicasPerPrimary} replica(s) (cluster-node-timeout ${o.failureDetectionMs} ms), rendered start/heal/failback scripts`;
  }

  static async start(o: ClusterTargetOptions): Promise<ClusterTarget> {
    return startedOrStopped(new ClusterTarget(o), (t) => t.boot());
  }

  private async boot(): Promise<void> {
    const base = this.o.hostBase ?? 140;
    mkdirSync(dirname(this.passwordFile), { recursive: true, mode: 0o700 });
    writeFileSync(this.passwordFile, this.o.password, { mode: 0o600 });
    const count = this.o.primaries * (1 + this.o.replicasPerPrimary);
    for (const spec of await clusterPodSpecs(count, base, this.o.zones, this.fleet.baseDir))
      this.pods.push({ ...spec, nodeId: "", proc: undefined });
    if (this.o.firstStartPeersListed === false) writeFileSync(this.hostsFile, "");
    else this.writeHosts();
    await Promise.all(this.pods.map((p) => this.startFirst(p)));
    this.writeHosts();
    const connector = new DirectConnector({ password: this.o.password });
    const result = await bootstrapCluster({
      members: this.pods.map((p) => localMember(p.proc as ValkeyProcess, p.zone)),
      primaries: this.o.primaries,
      replicasPerPrimary: this.o.replicasPerPrimary,
      connector,
      password: this.o.password,
      ...(this.o.bootstrapTimeoutMs === undefined ? {} : { timeoutMs: this.o.bootstrapTimeoutMs }),
    });
    for (const p of this.pods) p.nodeId = result.nodeIds[`${p.host}:${p.port}`] as string;
    // Without zone labels: each member's availability-zone set with CONFIG SET, as the ClusterBootstrap step does.
    if (this.o.zoneLabel === false)
      await announceZones(
        this.pods.map((p) => ({
          id: p.nodeId ?? `${p.host}:${p.port}`,
          zone: p.zone,
          endpoint: { host: p.host, port: p.port },
        })),
        connector,
      );
  }

  private writeHosts(): void {
    writeFileSync(this.hostsFile, this.hostsText());
  }

  /** The stand-in for DNS: a line `ip name port` per member, where each runs now. */
  private hostsText(): string {
    return this.pods.map((p) => `${p.host} ${p.hostname} ${p.port}`).join("\n") + "\n";
  }

  private cliEnv(): Record<string, string> {
    return localPodEnv(this.o.password, this.serverPath);
  }

  /**
   * The first start, before the cluster exists: a port taken between its probe and the bind (seen
   * in CI: another test's member on the same 127.0.0.x took it) gets new ports, up to 3 tries.
   */
  private async startFirst(p: Pod): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startPod(p);
      } catch (err) {
        if (attempt >= 3 || !/Address already in use/.test((err as Error).message)) throw err;
        p.port = await freePort(p.host);
        p.busPort = await freePort(p.host);
        if (this.o.firstStartPeersListed !== false) this.writeHosts();
      }
    }
  }

  /** Starts a member as its pod does (cluster-pod.ts) on its current address. */
  private async startPod(p: Pod): Promise<void> {
    const env = {
      valkey: this.o.valkey,
      nodeTimeoutMs: this.o.failureDetectionMs,
      passwordFile: this.passwordFile,
      hostsFile: this.hostsFile,
      cliEnv: this.cliEnv(),
      zoneLabel: this.o.zoneLabel ?? true,
      deployedScriptClocks: this.o.deployedScriptClocks ?? false,
    };
    p.proc = await this.fleet.start({
      name: p.name,
      bind: p.host,
      port: p.port,
      clusterEnabled: true,
      clusterPort: p.busPort,
      // A member restarted without its data waits in rejoin.sh's gate until its old shard failed over. A fresh
      // member's gate asks every peer once (a valkey-cli each): N members started together make N² calls on
      // this machine's cores (200 members answered PING 79–89 s after their start, bench:scale 2026-11-30).
      startTimeoutMs: this.o.startTimeoutMs ?? Math.max(90_000, this.pods.length * 1_000),
      ...(this.o.membersNice === undefined ? {} : { nice: this.o.membersNice }),
      launch: clusterPodLaunch(p, env),
    });
  }

  /** The members by name (a client resolves them through `resolve`, as pods through DNS). */
  private seeds = (): { host: string; port: number }[] => this.pods.map((p) => ({ host: p.hostname, port: p.port }));

  private resolve = (name: string): string | undefined => this.pods.find((p) => p.hostname === name)?.host;
  /** The members where they run now (the `all` fault moves them to new addresses, as pods get new IPs). */
  metricsEndpoints = (): ReturnType<NonNullable<DrillTarget["metricsEndpoints"]>> => ({
    endpoints: this.pods.map((p) => ({ component: "valkey" as const, pod: p.name, host: p.host, port: p.port })),
    password: this.o.password,
  });

  valkeyPyTarget = (): ValkeyPySpec => valkeyPyClusterSpec(this.pods, this.hostsFile, this.o.password);

  loadClients(timeoutMs: number, settings?: ClientSettings): ReturnType<DrillTarget["loadClients"]> {
    const { password: pw } = this.o;
    const dial = (host: string, port: number) =>
      plainRedis(this.resolve(host) ?? host, port, pw, timeoutMs, undefined, settings);
    const make = (): LoadClient => ({
      kind: "cluster",
      client: clusterClient(this.seeds(), pw, timeoutMs, this.resolve, false, settings),
      dial,
    });
    return [{ client: "cluster-client", make }];
  }

  /** The shards now, each with a hash tag in it (cluster-pod.ts loadShardsOf). */
  loadShards = (): Promise<LoadShard[]> =>
    loadShardsOf(this.pods.find((x) => x.proc?.alive()) ?? (this.pods[0] as Pod), this.o.password);

  /** The first live member's CLUSTER NODES (cluster-pod.ts clusterNodesOf). */
  private async nodesView(): Promise<ClusterNodes> {
    for (const p of this.pods) {
      if (!p.proc?.alive()) continue;
      try {
        return await clusterNodesOf(p.host, p.port, this.o.password, 500, 1000);
      } catch {
        /* next */
      }
    }
    throw new Error("no member answers CLUSTER NODES");
  }

  /** Polls the survivors' CLUSTER NODES for a fail?/fail flag on a killed node (cluster-pod.ts watchFailMarks). */
  private watch(killed: readonly Pod[]): { detectedAt: () => number | undefined; stop: () => void } {
    return watchFailMarks(
      () => this.pods.filter((p) => !killed.includes(p) && p.proc?.alive() === true),
      killed.map((k) => k.nodeId),
      this.o.password,
    );
  }

  /**
   * The fault, with the node ids it hits (their shards are the affected ones; `all` and `upgrade`: none marked, every
   * shard counts).
   */
  async inject(fault: Fault): Promise<FaultHandle> {
    const primaryIds = await this.primaryIds();
    const primary = this.pods.find((p) => primaryIds.has(p.nodeId)) as Pod;
    const replica = this.pods.find((p) => !primaryIds.has(p.nodeId)) as Pod;
    const hit = faultVictims(fault, {
      primary,
      replica,
      lostVolume: this.lostVolumeOf === "primary" ? primary : replica,
      pods: this.pods,
    });
    const ids = hit.map((p) => p.nodeId);
    return { ...(await this.injectOn(fault, primary, replica)), affectedNodeIds: ids };
  }

  private async injectOn(fault: Fault, primary: Pod, replica: Pod): Promise<FaultHandle> {
    if (fault === "freeze") return this.freeze(primary);
    if (fault === "partition") return this.partition(primary, label(primary));
    if (fault === "primary" || fault === "replica") {
      const victim = fault === "primary" ? primary : replica;
      const killed = await this.killAndReturn([victim], this.o.restartDelayMs, false);
      return killedHandle(`SIGKILL ${fault} ${label(victim)}; restarted after ${this.o.restartDelayMs} ms`, killed);
    }
    if (fault === "crash-restart") {
      const delay = crashRestartDelay(this.o);
      const aofAtKill = await readAofInfo(primary.host, primary.port, this.o.password).catch(() => undefined);
      const killed = await this.killAndReturn([primary], delay, false);
      const handle = killedHandle(
        `SIGKILL primary ${label(primary)}; restarted in place on its data dir after ${delay} ms (cluster-node-timeout ${this.o.failureDetectionMs} ms)`,
        killed,
      );
      return aofAtKill === undefined ? handle : { ...handle, aofAtKill };
    }
    if (fault === "lost-volume") {
      const victim = this.lostVolumeOf === "primary" ? primary : replica;
      return this.loseVolume(victim, `${this.lostVolumeOf} ${label(victim)}`);
    }
    if (fault === "zone") {
      const victims = this.pods.filter((p) => p.zone === primary.zone);
      const killed = await this.killAndReturn(victims, this.o.zoneDownMs, false);
      return killedHandle(
        `zone ${primary.zone} down: SIGKILL ${victims.map((v) => v.name).join(", ")}; back after ${this.o.zoneDownMs} ms`,
        killed,
      );
    }
    if (fault === "all") {
      const killed = await this.killAndReturn([...this.pods], this.o.restartDelayMs, true);
      return killedHandle(
        `SIGKILL every member (${this.pods.length}); restarted after ${this.o.restartDelayMs} ms on NEW addresses`,
        killed,
        "every member is down: no survivor to mark a failure",
      );
    }
    if (fault === "upgrade") return this.upgrade();
    if (fault !== "switchover")
      throw new Error(
        `the ${String(fault satisfies never)} fault is not implemented for the local ${this.mode} target`,
      );
    return this.switchover(primary);
  }

  /**
   * SIGKILL of `victims` (watched for fail marks first), started again after `downMs` (on new addresses if
   * `newAddress`).
   */
  private async killAndReturn(victims: Pod[], downMs: number, newAddress: boolean): Promise<Killed> {
    const w = this.watch(victims);
    await Promise.all(victims.map((v) => killHard(v.proc)));
    const restored = (async () => {
      await sleep(downMs);
      if (newAddress) await this.moveToNewAddresses(victims);
      await Promise.all(victims.map((v) => this.startPod(v)));
    })();
    return { restored, w };
  }

  /**
   * The `all` fault's new addresses: hostBase + max(50, members) + ordinal, or back to hostBase + ordinal if already
   * moved.
   */
  private async moveToNewAddresses(victims: readonly Pod[]): Promise<void> {
    const left = victims.map((v) => v.host);
    if (this.o.blackholeLeftAddresses !== undefined) {
      // The last move's drop covers the addresses this one moves back to.
      await this.blackholed?.lift();
      this.blackholed = await Partition.blackhole(this.o.blackholeLeftAddresses, left);
    }
    this.moved = !this.moved;
    const base = (this.o.hostBase ?? 140) + (this.moved ? Math.max(50, this.pods.length) : 0);
    for (const v of victims) v.host = loopbackHost(base + v.index);
    this.writeHosts();
  }

  /** `freeze`: the primary SIGSTOPped past cluster-node-timeout, then SIGCONT. */
  private freeze(primary: Pod): FaultHandle {
    const hold = freezeHoldMs(this.o);
    const w = this.watch([primary]);
    primary.proc?.signal("SIGSTOP");
    const restored = sleep(hold).then(() => primary.proc?.signal("SIGCONT"));
    return {
      description: `SIGSTOP primary ${label(primary)} for ${hold} ms (past cluster-node-timeout), then SIGCONT`,
      restored,
      detectedAt: w.detectedAt,
      stopWatching: w.stop,
    };
  }

  /** `switchover`: the primary's pod restarted as Kubernetes would (its preStop first: CLUSTER FAILOVER). */
  private switchover(primary: Pod): FaultHandle {
    const restored = this.restartPod(primary, this.o.restartDelayMs);
    return {
      description: `preStop of primary ${label(primary)} (CLUSTER FAILOVER to a synced replica), then SIGTERM; restarted after ${this.o.restartDelayMs} ms`,
      restored,
      detectedAt: () => undefined,
      detectionNote: "planned: nothing to detect",
      stopWatching: () => undefined,
    };
  }

  /**
   * As a pod restarts: its preStop script (a primary hands its slots to a synced replica), then SIGTERM, then it starts
   * again after `delayMs`.
   */
  private async restartPod(p: Pod, delayMs: number): Promise<void> {
    const dir = dirname(p.proc?.logfile ?? "");
    // Its log also goes to the member's data dir, as the pods' does to their data volume.
    await promisify(execFile)("sh", [join(dir, PRESTOP_SCRIPT_KEY), join(p.dataDir, PRESTOP_LOG_FILE)], {
      env: { ...process.env, ...this.cliEnv() },
      timeout: 30_000,
    });
    await p.proc?.stop(10_000);
    await sleep(delayMs);
    await this.startPod(p);
  }

  /** `upgrade`: every member rolled from the server it started on to the current one (upgrade-fault.ts). */
  private upgrade(): FaultHandle {
    const byAddress = (address: string): Pod => {
      const p = this.pods.find((x) => `${x.host}:${x.port}` === address);
      if (p === undefined) throw new Error(`upgrade: no member at ${address}`);
      return p;
    };
    return injectUpgrade({
      from: resolvePreviousServer(this.serverPath ?? ""),
      switchTo: (path) => (this.serverPath = path),
      endpoints: () => this.pods.map((p) => ({ host: p.host, port: p.port })),
      password: this.o.password,
      ops: {
        verify: () => this.verify(),
        restart: (step) => this.restartPod(byAddress(step.address), 0),
        failover: (address) => clusterFailover(byAddress(address), this.o.password),
      },
    });
  }

  /**
   * Cuts `primary` off from every other member (bus and data ports: all their traffic) for partitionHoldMs; clients
   * still reach it.
   */
  private async partition(primary: Pod, what: string): Promise<FaultHandle> {
    const cap = partitionCapability();
    if (!cap.ok) throw new Error(`partition: ${cap.reason}`);
    const hold = partitionHoldMs(this.o);
    const w = this.watch([primary]);
    const end = (p: Pod): { host: string; port: number; ports: number[] } => ({
      host: p.host,
      port: p.port,
      ports: [p.port, p.busPort],
    });
    const peers = this.pods.filter((p) => p !== primary).map(end);
    const cut = await injectPartition({
      iptables: cap.iptables,
      isolated: end(primary),
      peers,
      holdMs: hold,
      password: this.o.password,
    });
    this.partitioned = cut;
    return {
      description: `partition: primary ${what} cut off from the ${peers.length} other members for ${hold} ms (cluster-node-timeout ${this.o.failureDetectionMs} ms), clients still reach it (${cut.partition.describe()}); then healed`,
      restored: cut.restored,
      detectedAt: w.detectedAt,
      stopWatching: () => {
        w.stop();
        cut.stop();
      },
      fencedAt: cut.fencedAt,
      openAskedAt: cut.openAskedAt,
      demotedAt: cut.demotedAt,
    };
  }

  /**
   * `lost-volume`: SIGKILL the member, delete its data dir (AOF, RDB, nodes.conf, zone file), start
   * it again after restartDelayMs with the same start.sh: it comes back with a new node id and
   * must rejoin on its own (rejoin.sh); the pod's node id is refreshed once it answers.
   */
  private async loseVolume(victim: Pod, what: string): Promise<FaultHandle> {
    const w = this.watch([victim]);
    await killHard(victim.proc);
    rmSync(victim.dataDir, { recursive: true, force: true });
    const restored = (async () => {
      await sleep(this.o.restartDelayMs);
      await this.startPod(victim);
      victim.nodeId = await clusterMyId(victim, this.o.password);
    })();
    return {
      description: `SIGKILL ${what}, data dir deleted; restarted empty after ${this.o.restartDelayMs} ms (new node id, rejoins by itself)`,
      restored,
      detectedAt: w.detectedAt,
      stopWatching: w.stop,
    };
  }

  async verify(): Promise<TopologyReport> {
    const connector = new DirectConnector({ password: this.o.password, connectTimeoutMs: 1000 });
    return verifyTopology({
      mode: "cluster",
      seeds: this.pods.map((p) => ({ host: p.host, port: p.port })),
      connector,
      zones: new StaticZoneSource(Object.fromEntries(this.pods.map((p) => [`${p.host}:${p.port}`, p.zone]))),
      expect: { primaries: this.o.primaries, replicasPerPrimary: this.o.replicasPerPrimary },
    });
  }

  /** The first primary's settings (every member runs the same config). */
  async durability(): Promise<DurabilityConfig> {
    const ids = await this.primaryIds();
    const p = this.pods.find((x) => ids.has(x.nodeId));
    if (p === undefined) throw new Error("no primary to read the durability settings from");
    return readDurability(p.host, p.port, this.o.password);
  }

  /** Node ids of the primaries serving slots, as a survivor sees them. */
  private async primaryIds(): Promise<Set<string>> {
    return new Set(
      (await this.nodesView()).filter((n) => n.role === "primary" && n.slots.length > 0 && !n.failed).map((n) => n.id),
    );
  }

  /**
   * A full restart on new addresses with one member back late (the CI's cluster `all` row of 2026-12-03: a primary
   * back seconds after the rest, its first contact with them later than its 2 s writable delay): every member
   * SIGKILLed; all but `lateName` started again after restartDelayMs; `lateName` `lateMs` after them, with the
   * stand-in for DNS naming every member at its old address for the first `staleMs` of its run. Returns once that
   * member answers PING, with where it runs and the moment the names are current again.
   */
  async restartWithLateMember(
    lateName: string,
    lateMs: number,
    staleMs: number,
  ): Promise<{ host: string; port: number; namesCurrent: Promise<void> }> {
    const late = this.pods.find((p) => p.name === lateName);
    if (late === undefined) throw new Error(`no member ${lateName}`);
    const oldNames = this.hostsText();
    await Promise.all(this.pods.map((v) => killHard(v.proc)));
    await sleep(this.o.restartDelayMs);
    await this.moveToNewAddresses(this.pods);
    await Promise.all(this.pods.filter((p) => p !== late).map((p) => this.startPod(p)));
    await sleep(lateMs);
    if (staleMs > 0) writeFileSync(this.hostsFile, oldNames);
    await this.startPod(late);
    const namesCurrent = sleep(staleMs).then(() => this.writeHosts());
    return { host: late.host, port: late.port, namesCurrent };
  }

  /** A member's own stderr (its start, heal, rejoin and failback scripts' lines), by name. */
  memberLog(name: string): string {
    return this.pods.find((p) => p.name === name)?.proc?.stderr() ?? "";
  }

  /** The member by node ID, as `member-<n>`. */
  memberName(nodeId: string): string | undefined {
    return this.pods.find((p) => p.nodeId === nodeId)?.name;
  }

  /** Per key through the slot-aware client; a key whose slot no node serves is left out (unknown). */
  async readBack(keys: readonly string[]): Promise<Map<string, string | undefined>> {
    return readBackCluster(this.seeds(), this.o.password, this.resolve, keys);
  }

  async stop(): Promise<void> {
    this.partitioned?.abort();
    this.blackholed?.heal();
    await this.fleet.stopAll();
    await reapBackgroundScripts(`VALKEY_HEAL_HOSTS_FILE=${this.hostsFile}`);
  }
}
