/**
 * The replication drill target: the local Sentinel topology (1 + N members through the rendered
 * start script, 3 Sentinels, HAProxy write endpoint; harness/local/sentinel-topology.ts).
 * Faults: SIGKILL of the primary / a replica; a zone (every member and Sentinel in the zone of the
 * primary, down for `zoneDownMs`); all members; crash-restart (SIGKILL of the primary, restarted in
 * place on its data dir faster than down-after: an OOM kill under `restartPolicy: Always`); a switchover (the members'
 * rendered preStop run by
 * sh on the primary, then the old primary's pod stops and starts again); a partition (iptables:
 * the primary cut off from the Sentinels and replicas, not from clients or HAProxy, for
 * partitionMs; partition-fault.ts). Killed members return
 * through the same start script with their data dir on their OLD address: locally Sentinel has no
 * DNS to follow a member to a new one (in Kubernetes it follows the stable hostname).
 * Detection: the Sentinels' +sdown / +odown events (pub/sub), first one naming a killed member.
 */
import { sentinelsCounted } from "../../core/roll/endpoints-settled.js";
import { rmSync } from "node:fs";
import { Redis } from "ioredis";
import { DEFAULT_CHECK_INTERVAL_MS } from "../../pod/haproxy-cfg.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";
import { resolvePreviousServer } from "../../benchmarks/run/binaries.js";
import { runReplicationPreStop } from "../local/replication-prestop.js";
import { killHard, SentinelTopology, type Member, type TopologyNode } from "../local/sentinel-topology.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { sleep } from "../../core/util/poll-until.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import type { Fault } from "../../vocabulary/faults.js";
import { plainRedis, sentinelRedis } from "../../core/drill/load.js";
import type { DurabilityConfig } from "../../core/drill/bounds.js";
import { readAofInfo } from "../../core/drill/aof-at-kill.js";
import { DEFAULT_CLIENT_SETTINGS, type ClientSettings } from "../../core/drill/client-settings.js";
import type { ValkeyPySpec } from "../../core/drill/valkey-py-stream.js";
import { partitionCapability } from "./partition.js";
import { injectPartition, type PartitionFault } from "./partition-fault.js";
import { SplitCounter } from "./split-counter.js";
import type { SentinelEventAt } from "../../core/drill/sentinel-events.js";
import { injectUpgrade } from "./upgrade-fault.js";
import {
  crashRestartDelay,
  freezeHoldMs,
  partitionHoldMs,
  readDurability,
  readInBatches,
  startedOrStopped,
  type DrillTarget,
  type DrillTimings,
  type FaultHandle,
} from "../../core/drill/target.js";

/** A fault handle's stopWatching when the fault itself watches nothing. */
const stopWatching = (): void => undefined;

/** A member as fault descriptions name it. */
const label = (m: Member): string => `${m.name} (${m.address}, zone ${m.zone})`;

/** CLIENT SETNAME of the write endpoint's load connections (the partition drill counts them). */
const WRITE_ENDPOINT_NAME = "drill-write-endpoint";

/** What the members' preStop does on the primary (for the fault description). */
const PRESTOP_SUMMARY = "pause writes, replicas catch up, SENTINEL FAILOVER, follow the new primary, unpause";

export interface ReplicationTargetOptions extends DrillTimings {
  replicas: number;
  zones: readonly string[];
  password: string;
  baseDir?: string;
  /**
   * The valkey-server members and Sentinels start with (their image's; the `upgrade` fault rolls them to the current
   * one). @default resolveBinaries()'s
   */
  serverPath?: string;
}

export class ReplicationTarget implements DrillTarget {
  readonly mode = "replication" as const;
  readonly describe: string;
  private readonly events: SentinelEventAt[] = [];
  private readonly subscribers: Redis[] = [];
  /** The last switchover's preStop log (the script's stderr). */
  preStopLog = "";
  /** The last partition fault (healed by stop() if still in place). */
  partitioned: PartitionFault | undefined;
  private onEvent: ((e: SentinelEventAt) => void) | undefined;

  private constructor(
    readonly t: SentinelTopology,
    private readonly o: ReplicationTargetOptions,
  ) {
    this.describe = `replication: 1 primary + ${o.replicas} replicas, ${t.sentinels.length} Sentinels (down-after ${t.timings.downAfterMs} ms, failover-timeout ${t.timings.failoverTimeoutMs} ms), HAProxy write endpoint`;
  }

  static async start(o: ReplicationTargetOptions): Promise<ReplicationTarget> {
    const t = await SentinelTopology.start({
      replicas: o.replicas,
      zones: o.zones,
      password: o.password,
      downAfterMs: o.failureDetectionMs,
      failoverTimeoutMs: o.failoverTimeoutMs,
      // HAProxy checks as deployed (haproxy-cfg.ts defaults): the write endpoint's outage is the pods'.
      checkIntervalMs: DEFAULT_CHECK_INTERVAL_MS,
      memberWaitSeconds: 30,
      baseDir: o.baseDir,
      serverPath: o.serverPath,
    });
    return startedOrStopped(new ReplicationTarget(t, o), (target) => target.subscribe());
  }

  private async subscribe(): Promise<void> {
    for (const s of this.t.sentinels) {
      const sub = new Redis({
        host: s.host,
        port: s.port,
        password: this.o.password,
        lazyConnect: true,
        retryStrategy: () => 200,
        maxRetriesPerRequest: 0,
      });
      sub.on("error", () => undefined);
      await sub.connect();
      // Every event the Sentinel publishes (its channels are the event names: sentinel-events.ts).
      sub.on("pmessage", (_pattern: string, channel: string, payload: string) => {
        const e = { sentinel: s.name, at: Date.now(), channel, payload };
        this.events.push(e);
        this.onEvent?.(e);
      });
      await sub.psubscribe("*");
      this.subscribers.push(sub);
    }
  }

  loadClients(
    commandTimeoutMs: number,
    settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
  ): ReturnType<DrillTarget["loadClients"]> {
    const w = this.t.proxy!.write;
    const pw = this.o.password;
    const dial = (): Redis => plainRedis(w.host, w.port, pw, commandTimeoutMs, WRITE_ENDPOINT_NAME, settings);
    return [
      {
        client: "sentinel-client",
        make: () => ({
          kind: "redis",
          client: sentinelRedis(this.t.sentinelEndpoints, this.t.masterName, pw, commandTimeoutMs, settings),
        }),
      },
      { client: "write-endpoint", make: () => ({ kind: "redis", client: dial(), redial: dial }) },
    ];
  }

  metricsEndpoints(): ReturnType<NonNullable<DrillTarget["metricsEndpoints"]>> {
    const status = this.t.proxy?.status;
    const pods = (component: "valkey" | "sentinel", xs: readonly { name: string; host: string; port: number }[]) =>
      xs.map((x) => ({ component, pod: x.name, host: x.host, port: x.port }));
    return {
      endpoints: [
        ...pods("valkey", this.t.members),
        ...pods("sentinel", this.t.sentinels),
        ...(status === undefined
          ? []
          : [
              {
                component: "haproxy" as const,
                pod: "haproxy-0",
                host: status.host,
                port: status.port,
                path: METRICS_PATH,
              },
            ]),
      ],
      password: this.o.password,
    };
  }

  valkeyPyTarget(): ValkeyPySpec {
    return {
      stream: "valkey-py-sentinel",
      target: { mode: "replication", sentinels: this.t.sentinelEndpoints, masterName: this.t.masterName },
      password: this.o.password,
    };
  }

  /** The fault, and the Sentinels' events from it on (FaultHandle.sentinelEvents). */
  async inject(fault: Fault): Promise<FaultHandle> {
    const since = Date.now();
    const handle = await this.injectFault(fault);
    return { ...handle, sentinelEvents: () => this.events.filter((e) => e.at >= since) };
  }

  private async injectFault(fault: Fault): Promise<FaultHandle> {
    const primary = this.t.member(await this.t.primaryFromSentinels());
    const replicas = this.t.members.filter((m) => m !== primary);
    const faultAt = Date.now();
    const detectionOf = (killed: readonly TopologyNode[]): (() => number | undefined) =>
      this.detectionOf(faultAt, killed);
    if (fault === "freeze") return this.freeze(primary, detectionOf([primary]));
    if (fault === "crash-restart") return this.crashRestart(primary, detectionOf([primary]));
    if (fault === "partition") return this.partition(primary, replicas, detectionOf([primary]));
    if (fault === "primary" || fault === "replica" || fault === "lost-volume")
      return this.killMember(fault, fault === "replica" ? (replicas[0] as Member) : primary, detectionOf);
    if (fault === "zone") return this.zoneDown(primary.zone, detectionOf);
    if (fault === "all") return this.killAll(detectionOf);
    if (fault === "upgrade") return this.upgrade();
    if (fault !== "switchover")
      throw new Error(
        `the ${String(fault satisfies never)} fault is not implemented for the local ${this.mode} target`,
      );
    return this.switchover(primary);
  }

  /** When (Date.now()) a Sentinel first marked one of `killed` down (+sdown / +odown) after the fault. */
  private detectionOf(faultAt: number, killed: readonly TopologyNode[]): () => number | undefined {
    const wanted = new Set(killed.map((k) => `${k.host} ${k.port}`));
    const marks = new Set(["+sdown", "+odown"]);
    return () =>
      this.events.find(
        (e) => e.at >= faultAt && marks.has(e.channel) && wanted.has(e.payload.split(" ").slice(2, 4).join(" ")),
      )?.at;
  }

  /** `freeze`: the primary SIGSTOPped past down-after, then SIGCONT. */
  private freeze(primary: Member, detectedAt: () => number | undefined): FaultHandle {
    const hold = freezeHoldMs(this.o);
    primary.proc?.signal("SIGSTOP");
    const restored = sleep(hold).then(() => primary.proc?.signal("SIGCONT"));
    return {
      description: `SIGSTOP primary ${label(primary)} for ${hold} ms (past down-after), then SIGCONT`,
      restored,
      detectedAt,
      stopWatching,
    };
  }

  /**
   * `primary`, `replica`, `lost-volume`: one member SIGKILLed (lost-volume: its data dir deleted), restarted after
   * restartDelayMs.
   */
  private async killMember(
    fault: "primary" | "replica" | "lost-volume",
    victim: Member,
    detectionOf: (killed: readonly TopologyNode[]) => () => number | undefined,
  ): Promise<FaultHandle> {
    if (victim === undefined) throw new Error("the replica fault needs at least one replica");
    await killHard(victim.proc);
    // lost-volume: the data dir (AOF, RDB) is gone; the same start script must not serve it empty.
    if (fault === "lost-volume") rmSync(victim.dataDir, { recursive: true, force: true });
    const restored = (async () => {
      await sleep(this.o.restartDelayMs);
      await this.t.startMember(victim.ordinal);
    })();
    return {
      description: `SIGKILL ${fault === "lost-volume" ? "primary" : fault} ${label(victim)}${fault === "lost-volume" ? ", data dir deleted" : ""}; restarted after ${this.o.restartDelayMs} ms`,
      restored,
      detectedAt: detectionOf([victim]),
      stopWatching,
    };
  }

  /** `zone`: every member and Sentinel in the primary's zone SIGKILLed, back after zoneDownMs (Sentinels first). */
  private async zoneDown(
    zone: string,
    detectionOf: (killed: readonly TopologyNode[]) => () => number | undefined,
  ): Promise<FaultHandle> {
    const members = this.t.members.filter((m) => m.zone === zone);
    const sentinels = this.t.sentinels.filter((s) => s.zone === zone);
    await Promise.all([...members.map((m) => killHard(m.proc)), ...sentinels.map((s) => killHard(s.proc))]);
    const restored = (async () => {
      await sleep(this.o.zoneDownMs);
      await Promise.all(sentinels.map((s) => this.t.startSentinel(this.t.sentinels.indexOf(s))));
      await Promise.all(members.map((m) => this.t.startMember(m.ordinal)));
    })();
    const what = `${members.map((m) => m.name).join(", ")} and ${sentinels.map((s) => s.name).join(", ") || "no Sentinel"}`;
    return {
      description: `zone ${zone} (the primary's) down: SIGKILL ${what}; back after ${this.o.zoneDownMs} ms`,
      restored,
      detectedAt: detectionOf(members),
      stopWatching,
    };
  }

  /** `all`: every member SIGKILLed at once, restarted after restartDelayMs on its old address. */
  private async killAll(
    detectionOf: (killed: readonly TopologyNode[]) => () => number | undefined,
  ): Promise<FaultHandle> {
    const all = [...this.t.members];
    await Promise.all(all.map((m) => killHard(m.proc)));
    const restored = (async () => {
      await sleep(this.o.restartDelayMs);
      await Promise.all(all.map((m) => this.t.startMember(m.ordinal)));
    })();
    return {
      description: `SIGKILL every member (${all.length}); restarted after ${this.o.restartDelayMs} ms on their old addresses (locally Sentinel has no DNS to follow a new one)`,
      restored,
      detectedAt: detectionOf(all),
      stopWatching,
    };
  }

  /** `switchover`: the pod's preStop script (rendered, run by sh), then the pod stops and comes back. */
  private switchover(primary: Member): FaultHandle {
    const restored = (async () => {
      this.preStopLog = await runReplicationPreStop(primary, this.o.password);
      await primary.proc?.stop(10_000);
      await sleep(this.o.restartDelayMs);
      await this.t.startMember(primary.ordinal);
    })();
    return {
      description: `preStop of primary ${label(primary)} (${PRESTOP_SUMMARY}), then its pod stops (SIGTERM) and restarts after ${this.o.restartDelayMs} ms`,
      restored,
      detectedAt: () => undefined,
      detectionNote: "planned: nothing to detect",
      stopWatching,
    };
  }

  /**
   * `upgrade`: every Sentinel and member rolled from the server it started on to the current one
   * (upgrade-fault.ts); a member's restart runs its pod's preStop first (on the primary: the
   * switchover). Between steps the roll also waits for HAProxy to count every Sentinel again
   * (endpoints-settled.ts). HAProxy is not restarted: deployed, it is a Deployment whose own rolling update
   * keeps one replica serving (maxUnavailable 0); locally it is one process.
   */
  private upgrade(): FaultHandle {
    const t = this.t;
    return injectUpgrade({
      from: resolvePreviousServer(t.serverPath ?? ""),
      switchTo: (path) => (t.serverPath = path),
      endpoints: () => [...t.members, ...t.sentinels].map(({ host, port }) => ({ host, port })),
      password: this.o.password,
      ops: {
        verify: () => this.verify(),
        restart: async (step) => {
          if (step.kind === "sentinel") {
            const i = t.sentinels.findIndex((s) => s.address === step.address);
            await t.sentinels[i]?.proc?.stop(10_000);
            await t.startSentinel(i);
            return;
          }
          const m = t.member(step.address);
          this.preStopLog = await runReplicationPreStop(m, this.o.password);
          await m.proc?.stop(10_000);
          await t.startMember(m.ordinal);
        },
        failover: () =>
          Promise.reject(new Error("replication mode has no CLUSTER FAILOVER: the primary's preStop switches over")),
        endpointsSettled: () =>
          t.proxy === undefined ? Promise.resolve(undefined) : sentinelsCounted(t.proxy.status, "HAProxy"),
      },
    });
  }

  /** SIGKILL the primary and start it again on its own address and data dir after crashRestartDelay(). */
  private async crashRestart(primary: Member, detectedAt: () => number | undefined): Promise<FaultHandle> {
    const delay = crashRestartDelay(this.o);
    const aofAtKill = await readAofInfo(primary.host, primary.port, this.o.password).catch(() => undefined);
    await killHard(primary.proc);
    const restored = (async () => {
      await sleep(delay);
      await this.t.startMember(primary.ordinal);
    })();
    return {
      description: `SIGKILL primary ${primary.name} (${primary.address}, zone ${primary.zone}); restarted in place on its data dir after ${delay} ms (down-after ${this.t.timings.downAfterMs} ms)`,
      restored,
      detectedAt,
      stopWatching: () => undefined,
      ...(aofAtKill === undefined ? {} : { aofAtKill }),
    };
  }

  /**
   * Cuts the primary off from the Sentinels and the replicas (partitionHoldMs); clients and
   * HAProxy still reach it. From the Sentinels' +switch-master until the old primary is back as a
   * replica (or the drill ends), counts the write endpoint's connections that land on it (split-counter.ts).
   */
  private async partition(
    primary: Member,
    replicas: Member[],
    detectedAt: () => number | undefined,
  ): Promise<FaultHandle> {
    const cap = partitionCapability();
    if (!cap.ok) throw new Error(`partition: ${cap.reason}`);
    const hold = partitionHoldMs(this.o);
    const faultAt = Date.now();
    const split = new SplitCounter(
      primary.host,
      primary.port,
      this.o.password,
      this.t.proxy!.write.host,
      WRITE_ENDPOINT_NAME,
    );
    this.onEvent = (e) => {
      if (e.channel === "+switch-master" && e.at >= faultAt) split.start();
    };
    const peers = [...replicas, ...this.t.sentinels].map((n) => ({ host: n.host, ports: [n.port] }));
    const cut = await injectPartition({
      iptables: cap.iptables,
      isolated: { host: primary.host, port: primary.port, ports: [primary.port] },
      peers,
      holdMs: hold,
      password: this.o.password,
    }).catch(async (err: unknown) => {
      await split.stop();
      throw err;
    });
    this.partitioned = cut;
    void cut.settled.finally(async () => {
      this.onEvent = undefined;
      await split.stop();
    });
    return {
      description: `partition: primary ${primary.name} (${primary.address}, zone ${primary.zone}) cut off from ${replicas.length} replica(s) and ${this.t.sentinels.length} Sentinels for ${hold} ms, clients and HAProxy still reach it (${cut.partition.describe()}); then healed`,
      restored: cut.restored,
      detectedAt,
      stopWatching: cut.stop,
      fencedAt: cut.fencedAt,
      openAskedAt: cut.openAskedAt,
      demotedAt: cut.demotedAt,
      connectionsToOldPrimaryAfterFailover: () => split.count,
    };
  }

  async verify(): Promise<TopologyReport> {
    const connector = new DirectConnector({ password: this.o.password, connectTimeoutMs: 1000 });
    return verifyTopology({
      mode: "replication",
      seeds: [],
      connector,
      zones: new StaticZoneSource(this.t.zoneMap),
      expect: { replicas: this.o.replicas },
      sentinel: { endpoints: this.t.sentinelEndpoints, masterName: this.t.masterName, connector },
    });
  }

  async durability(): Promise<DurabilityConfig> {
    const p = this.t.member(await this.t.primaryFromSentinels());
    return readDurability(p.host, p.port, this.o.password);
  }

  /** From the primary the Sentinels name; when none is named or it does not answer, every key is unknown. */
  async readBack(keys: readonly string[]): Promise<Map<string, string | undefined>> {
    let p: Member;
    try {
      p = this.t.member(await this.t.primaryFromSentinels());
    } catch {
      return new Map();
    }
    const c = new Redis({
      host: p.host,
      port: p.port,
      password: this.o.password,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: 10_000,
    });
    c.on("error", () => undefined);
    try {
      return await readInBatches(keys, (batch) => c.mget(batch), true);
    } finally {
      c.disconnect();
    }
  }

  async stop(): Promise<void> {
    this.partitioned?.abort();
    for (const s of this.subscribers) s.disconnect();
    await this.t.stopAll();
  }
}
