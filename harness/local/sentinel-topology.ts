/**
 * A Sentinel-managed replication set on this machine, all real processes tracked by the
 * process reaper: N+1 equal members started by the SAME rendered entrypoint the pods run
 * (pod/start-script.ts with the Sentinel start decision, run under `sh`), S
 * Sentinels (`valkey-server sentinel.conf --sentinel`, state kept in a per-Sentinel dir
 * across restarts), and an HAProxy write endpoint (the member a Sentinel majority names, while
 * it says role:master) plus read endpoint (role:slave only) and status frontend (`/ready`), from
 * the same haproxy.cfg renderer the pods use. Members, Sentinels and the proxy each get their own
 * 127.0.0.x address; zones are assigned round-robin (members and Sentinels separately, both from
 * the first zone).
 *
 * Secrets: the password sits in 0600 files only (the members' password file, sentinel.conf,
 * haproxy.cfg); the start script hands it to the cli through REDISCLI_AUTH.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderHaproxyCfg, type HaproxyCfgOptions } from "../../pod/haproxy-cfg.js";
import { DEFAULT_MASTER_NAME } from "../../pod/replication-start.js";
import type { SentinelTimings } from "../../pod/sentinel-conf.js";
import type { ValkeyConfig } from "../../config/types.js";
import { which } from "../../benchmarks/run/binaries.js";
import { openClient } from "../../core/topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { waitForReplicaLinks } from "./local-replication.js";
import { freePort } from "./ports.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { memberLaunch, sentinelLaunch } from "./replication-launch.js";
import { LocalFleet, type StartOptions, type ValkeyProcess } from "./valkey-process.js";

export interface SentinelTopologyOptions extends Partial<SentinelTimings> {
  /** Replicas besides the first primary (members = replicas + 1). */
  replicas: number;
  zones: readonly string[];
  password?: string;
  /** @default 3 */
  sentinels?: number;
  /** @default 2 */
  quorum?: number;
  masterName?: string;
  /** HAProxy health check interval. @default 500 */
  checkIntervalMs?: number;
  /** HAProxy health-check settings (haproxy-cfg.ts defaults otherwise). */
  haproxy?: Pick<HaproxyCfgOptions, "fall" | "rise" | "checkTimeoutMs" | "sentinelIntervalMs" | "downIntervalMs">;
  /** Start the HAProxy endpoints. @default true */
  proxy?: boolean;
  /** Local overrides of the deployed persistence / io-threads settings (pod/local-conf.ts). */
  server?: Pick<StartOptions, "appendonly" | "save" | "ioThreads">;
  /**
   * The deployed `valkey` config whose valkey.conf every member runs (fencing, persistence,
   * memory). @default the embedded default stack's (pod/local-conf.ts)
   */
  valkey?: ValkeyConfig;
  /** Seconds a member's start script waits for the Sentinels / a failover. @default 60 */
  memberWaitSeconds?: number;
  /** Where the members', Sentinels' and proxy's directories go (a temporary dir by default). */
  baseDir?: string;
  /** First octet-4 of the member addresses (127.0.0.x); Sentinels +50, proxy +100. @default 20 */
  hostBase?: number;
  /**
   * The valkey-server members and Sentinels start with (their image's); `serverPath` changes it for later starts.
   * @default resolveBinaries()'s
   */
  serverPath?: string;
}

export interface TopologyNode extends NodeEndpoint {
  name: string;
  zone: string;
  address: string;
  proc: ValkeyProcess | undefined;
}

export interface Member extends TopologyNode {
  ordinal: number;
  dataDir: string;
}

/** Timings of a local topology; parallel-syncs defaults to its replica count, as the stack's does. */
const LOCAL_DEFAULTS: Omit<SentinelTimings, "parallelSyncs"> = { downAfterMs: 5000, failoverTimeoutMs: 10_000 };

export class SentinelTopology {
  readonly fleet: LocalFleet;
  readonly members: Member[] = [];
  readonly sentinels: TopologyNode[] = [];
  /** HAProxy: the write and read endpoints and the HTTP status frontend (`/ready`). */
  proxy: { write: NodeEndpoint; read: NodeEndpoint; status: NodeEndpoint; proc: ValkeyProcess } | undefined;
  readonly masterName: string;
  readonly timings: SentinelTimings;
  /** The valkey-server the next (re)start runs: a new image, for an upgrade. */
  serverPath: string | undefined;

  private constructor(readonly o: SentinelTopologyOptions) {
    this.fleet = new LocalFleet(o.baseDir);
    this.serverPath = o.serverPath;
    this.masterName = o.masterName ?? DEFAULT_MASTER_NAME;
    this.timings = {
      downAfterMs: o.downAfterMs ?? LOCAL_DEFAULTS.downAfterMs,
      failoverTimeoutMs: o.failoverTimeoutMs ?? LOCAL_DEFAULTS.failoverTimeoutMs,
      parallelSyncs: o.parallelSyncs ?? Math.max(1, o.replicas),
    };
  }

  static async start(o: SentinelTopologyOptions): Promise<SentinelTopology> {
    if (!Number.isInteger(o.replicas) || o.replicas < 0)
      throw new Error(`replicas must be a whole number ≥ 0 (got ${o.replicas})`);
    const count = o.sentinels ?? 3;
    if (!Number.isInteger(count) || count < 1) throw new Error(`sentinels must be a whole number ≥ 1 (got ${count})`);
    if (o.zones.length === 0) throw new Error("zones must name at least one zone");
    const fencing = (o.valkey ?? defaultValkeyConfig()).replication.minReplicasToWrite;
    if (o.replicas < fencing)
      throw new Error(
        `replicas ${o.replicas} is below the deployed min-replicas-to-write ${fencing} (valkey.replication.minReplicasToWrite): the primary would refuse every write; run at least ${fencing} replica(s)`,
      );
    const t = new SentinelTopology(o);
    try {
      await t.boot(count);
    } catch (err) {
      await t.stopAll();
      throw err;
    }
    return t;
  }

  private async boot(sentinelCount: number): Promise<void> {
    const base = this.o.hostBase ?? 20;
    const zone = (i: number): string => this.o.zones[i % this.o.zones.length] as string;
    for (let i = 0; i <= this.o.replicas; i++) {
      const host = `127.0.0.${base + i}`;
      const port = await freePort(host);
      this.members.push({
        ordinal: i,
        name: `member-${i}`,
        host,
        port,
        zone: zone(i),
        address: endpointKey({ host, port }),
        dataDir: "",
        proc: undefined,
      });
    }
    for (let j = 0; j < sentinelCount; j++) {
      const host = `127.0.0.${base + 50 + j}`;
      const port = await freePort(host);
      this.sentinels.push({
        name: `sentinel-${j}`,
        host,
        port,
        zone: zone(j),
        address: endpointKey({ host, port }),
        proc: undefined,
      });
    }
    await Promise.all(this.sentinels.map((_, j) => this.startSentinel(j)));
    await Promise.all(this.members.map((m) => this.startMember(m.ordinal)));
    await this.waitForSentinelViews();
    await waitForReplicaLinks(this.members.slice(1), this.o.password, 30_000);
    if (this.o.proxy ?? true) await this.startProxy();
  }

  /** `host:port` -> zone for members and Sentinels (the verifier's --zones map). */
  get zoneMap(): Record<string, string> {
    return Object.fromEntries([...this.members, ...this.sentinels].map((n) => [n.address, n.zone]));
  }

  get sentinelEndpoints(): NodeEndpoint[] {
    return this.sentinels.map(({ host, port }) => ({ host, port }));
  }

  member(address: string): Member {
    const m = this.members.find((x) => x.address === address);
    if (m === undefined) throw new Error(`no member at ${address}`);
    return m;
  }

  /** Starts (or restarts, same address and dirs) member `ordinal` through the rendered start script. */
  async startMember(ordinal: number, opts: { wipeData?: boolean } = {}): Promise<Member> {
    const m = this.members[ordinal];
    if (m === undefined) throw new Error(`no member ${ordinal}`);
    if (m.proc?.alive()) throw new Error(`${m.name} is still running`);
    const waitSeconds = this.o.memberWaitSeconds ?? 60;
    const failoverRetrySeconds = Math.max(1, Math.ceil((2 * this.timings.failoverTimeoutMs) / 1000));
    m.proc = await this.fleet.start({
      name: m.name,
      bind: m.host,
      port: m.port,
      startTimeoutMs: (waitSeconds + 15) * 1000,
      launch: memberLaunch({
        name: m.name,
        host: m.host,
        port: m.port,
        password: this.o.password,
        sentinels: this.sentinels.map((x) => x.address),
        masterName: this.masterName,
        server: this.o.server,
        ...(this.o.valkey === undefined ? {} : { valkey: this.o.valkey }),
        wipeData: opts.wipeData,
        serverPath: this.serverPath,
        sentinel: { waitSeconds, firstStartGraceSeconds: 2, agreementSeconds: 5, failoverRetrySeconds },
        onDataDir: (d) => (m.dataDir = d),
      }),
    });
    return m;
  }

  /** Starts (or restarts) Sentinel `index`; its sentinel.conf (its state) is written only on first start. */
  async startSentinel(index: number): Promise<TopologyNode> {
    const s = this.sentinels[index];
    if (s === undefined) throw new Error(`no sentinel ${index}`);
    if (s.proc?.alive()) throw new Error(`${s.name} is still running`);
    const first = this.members[0] as Member;
    s.proc = await this.fleet.start({
      name: s.name,
      bind: s.host,
      port: s.port,
      launch: sentinelLaunch({
        name: s.name,
        host: s.host,
        port: s.port,
        password: this.o.password,
        masterName: this.masterName,
        primary: first,
        quorum: this.o.quorum ?? 2,
        timings: this.timings,
        serverPath: this.serverPath,
      }),
    });
    return s;
  }

  private async startProxy(): Promise<void> {
    const haproxy = process.env.HAPROXY ?? which("haproxy");
    if (haproxy === undefined)
      throw new Error(
        "haproxy not found: set HAPROXY or install it (run through .ci/setup, which installs the Debian package)",
      );
    const host = `127.0.0.${(this.o.hostBase ?? 20) + 100}`;
    const [writePort, readPort, statusPort] = [await freePort(host), await freePort(host), await freePort(host)];
    const write = { host, port: writePort };
    const read = { host, port: readPort };
    const status = { host, port: statusPort };
    const proc = await this.fleet.start({
      name: "haproxy",
      bind: host,
      port: writePort,
      launch: ({ dir }) => {
        const cfg = join(dir, "haproxy.cfg");
        const text = renderHaproxyCfg({
          servers: this.members.map((m) => ({ name: m.name, host: m.host, port: m.port })),
          sentinels: this.sentinels.map((x) => ({ name: x.name, host: x.host, port: x.port })),
          masterName: this.masterName,
          write,
          read,
          status,
          password: this.o.password,
          checkIntervalMs: this.o.checkIntervalMs ?? 500,
          // Its checks and proxied connections come from its own address, not 127.0.0.1.
          source: host,
          ...this.o.haproxy,
        });
        writeFileSync(cfg, text, { mode: 0o600 });
        return { command: haproxy, args: ["-f", cfg, "-db"] };
      },
    });
    this.proxy = { write, read, status, proc };
  }

  /** Asks one reachable Sentinel for the current primary. */
  async primaryFromSentinels(): Promise<string> {
    for (const s of this.sentinels) {
      if (!s.proc?.alive()) continue;
      const c = await openClient(s.host, s.port, s.address, {
        password: this.o.password,
        connectTimeoutMs: 1000,
      }).catch(() => undefined);
      if (c === undefined) continue;
      try {
        const r = (await c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", this.masterName)) as [string, string] | null;
        if (r !== null) return endpointKey({ host: r[0], port: Number(r[1]) });
      } finally {
        c.disconnect();
      }
    }
    throw new Error("no running Sentinel names a primary");
  }

  /** Until every running Sentinel sees every other running one and every running replica up, linked, promotable. */
  async waitForSentinelViews(timeoutMs = 30_000): Promise<void> {
    await pollUntil(
      async () => {
        const running = this.sentinels.filter((s) => s.proc?.alive());
        const replicas = this.members.filter((m) => m.proc?.alive()).length - 1;
        for (const s of running) {
          const c = await openClient(s.host, s.port, s.address, {
            password: this.o.password,
            connectTimeoutMs: 1000,
          }).catch(() => undefined);
          if (c === undefined) return `${s.address} not reachable`;
          try {
            const flat = (await c.call("SENTINEL", "MASTER", this.masterName)) as string[];
            const f = new Map<string, string>();
            for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i] as string, flat[i + 1] as string);
            if (Number(f.get("num-other-sentinels")) < running.length - 1)
              return `${s.address} sees ${f.get("num-other-sentinels")} other Sentinels`;
            // A failover ends once every replica is seen following the new primary (its next INFO):
            // until then SENTINEL FAILOVER answers INPROG and the replicas' links are replaced at its end.
            if (/failover_in_progress/.test(f.get("flags") ?? "")) return `${s.address} is still finishing a failover`;
            const slaves = (await c.call("SENTINEL", "REPLICAS", this.masterName)) as string[][];
            // Up, and linked since its start as this Sentinel last saw it (master-link-down-time >= 0;
            // -1000 until its INFO shows a link): the start script counts live replicas the same way,
            // and a Sentinel refreshes a replica's INFO once per SENTINEL_INFO_PERIOD_MS (sentinel-start.sh sets it).
            const field = (r: string[], k: string): string => (r.includes(k) ? (r[r.indexOf(k) + 1] ?? "") : "");
            // And promotable: a replica starts with replica-priority 0 until its first sync (the start
            // script), as the verifier checks too.
            const up = slaves.filter(
              (r) =>
                !/s_down|disconnected/.test(field(r, "flags")) &&
                Number(field(r, "master-link-down-time")) >= 0 &&
                field(r, "slave-priority") !== "0",
            ).length;
            if (up < replicas) return `${s.address} sees ${up} of ${replicas} replicas up, linked and promotable`;
          } finally {
            c.disconnect();
          }
        }
        return true;
      },
      { timeoutMs, intervalMs: 200, what: "every Sentinel to see its peers and the replicas" },
    );
  }

  /** INFO replication role of a running member. */
  async role(m: Member): Promise<string | undefined> {
    const c = await openClient(m.host, m.port, m.address, { password: this.o.password, connectTimeoutMs: 1000 });
    try {
      return parseInfo(await c.info("replication")).get("role");
    } finally {
      c.disconnect();
    }
  }

  /** CONFIG SET `param` `value` on member `m`; throws naming it unless the reply is OK. */
  async configSet(m: Member, param: string, value: string | number): Promise<void> {
    const c = await openClient(m.host, m.port, m.address, { password: this.o.password, connectTimeoutMs: 1000 });
    try {
      const reply = await c.config("SET", param, String(value));
      if (reply !== "OK") throw new Error(`${m.address}: CONFIG SET ${param} ${value} answered ${String(reply)}`);
    } finally {
      c.disconnect();
    }
  }

  async stopAll(): Promise<void> {
    await this.fleet.stopAll();
  }
}

/** SIGKILL and wait for the exit. */
export async function killHard(p: ValkeyProcess | undefined): Promise<void> {
  if (p === undefined || !p.alive()) return;
  p.signal("SIGKILL");
  await pollUntil(() => Promise.resolve(p.alive() ? "still running" : true), {
    timeoutMs: 10_000,
    what: `${p.name} to exit after SIGKILL`,
  });
}
