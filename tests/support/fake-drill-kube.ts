/**
 * A fake Kubernetes for the FailureDrill orchestration tests, on a virtual clock: StatefulSet-like
 * member and Sentinel pods that come back (new uid) after a deletion, Pending while their node is
 * cordoned; a load Job whose pod runs and then logs write records with an outage around the
 * fault; a verifier that fails until every pod is back. Only the orchestration is under test here
 * (the fault choice, the waits, the clocks, the figures, the clean-up); the load and the verifier
 * are tested against real valkey-server processes elsewhere.
 */
import { formatRecordLines, formatWritingLine } from "../../core/drill/record-lines.js";
import type { WriteRecord } from "../../core/drill/ledger.js";
import type { DrillKubeApi, DrillNode, DrillPod, ExecResult } from "../../components/steps/failure-drill/kube-api.js";
import { KILLED_WITH_CONTAINER } from "../../components/steps/failure-drill/faults.js";
import type { DrillLoadManifests } from "../../components/steps/failure-drill/load-job.js";
import type { TopologyCheckReport } from "../../core/verify/check-report.js";

/** A Running, ready pod on node `n`, as the drill's kube API lists one (uid `<name>-uid`). */
export const drillPod = (name: string, podIP: string): DrillPod => ({
  name,
  uid: `${name}-uid`,
  nodeName: "n",
  podIP,
  phase: "Running",
  ready: true,
  deleting: false,
  labels: {},
});

/** A virtual clock: sleep() resolves when every other waiter has had its turn, in time order. */
export class FakeClock {
  t = 1_700_000_000_000;
  private timers: { at: number; resolve: () => void }[] = [];
  now = (): number => this.t;
  sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.timers.push({ at: this.t + ms, resolve });
      setImmediate(() => this.advance());
    });
  private advance(): void {
    if (this.timers.length === 0) return;
    this.timers.sort((a, b) => a.at - b.at);
    const next = this.timers.shift()!;
    this.t = Math.max(this.t, next.at);
    next.resolve();
  }
}

interface PodState extends DrillPod {
  zone: string;
  /** Virtual times: back (scheduled) and Ready. */
  createdAt: number;
  scheduledAt: number;
  removeAt?: number;
}

export interface FakeKubeOptions {
  mode: "replication" | "cluster";
  clock: FakeClock;
  /** A deleted member comes back after this long (ms), Ready this much later. */
  recreateMs?: number;
  readyMs?: number;
  /** Grace period of a graceful delete (switchover). */
  graceMs?: number;
  /** Writes fail from the fault for this long (ms) in the fake load's records. */
  outageMs?: number;
  /** Keys the read-back says are missing (from the fault on, WAIT-confirmed included). */
  loseAfterFault?: number;
  /** Replace the load pod's log. */
  log?: (real: string) => string;
  /** The load pod never prints its writing line (a load that does not start writing). */
  silentLoad?: boolean;
  /** The first load's writing line names these streams as without an acknowledgement. */
  silentOnFirstLoad?: string[];
  /** The verifier never passes after the fault. */
  neverHeals?: boolean;
  /**
   * Cluster: the load writes one stream per shard (`cluster-client@<slots>`), and only the shard of the primary hit
   * stops; the report carries slot ranges.
   */
  shardStreams?: boolean;
  /** The fault agent (freeze, partition) injects this long after its pod is created. @default 3000 */
  agentStartMs?: number;
  /** The agent's log instead of injecting (it fails: phase Failed). */
  agentFails?: string;
  /** exec is refused with this message (an identity without pods/exec). */
  execFails?: string;
  /** exec runs and ends like this, nothing crashed (a server that refused the SHUTDOWN). */
  execExit?: ExecResult;
}

/** The fake cluster's shards, member-0, -1, -2 their primaries. */
const FAKE_SLOTS = ["0-5460", "5461-10921", "10922-16383"] as const;

/** A fault agent pod (freeze, partition) on the virtual clock. */
export interface FakeAgent {
  name: string;
  body: Record<string, unknown>;
  env: Record<string, string>;
  createdAt: number;
  injectAt: number;
  holdMs: number;
  /** When it undid the fault (after the hold, or at SIGTERM). */
  restoredAt?: number;
  deletedAt?: number;
}

export class FakeDrillKube implements DrillKubeApi {
  readonly calls: string[] = [];
  readonly created: DrillLoadManifests[] = [];
  readonly nodes: DrillNode[] = ["a", "b", "c"].map((z) => ({
    name: `node-${z}`,
    labels: { "topology.kubernetes.io/zone": `zone-${z}` },
    unschedulable: false,
  }));
  pods: PodState[] = [];
  /** Virtual times each load pod starts running. */
  readonly loadRunningAt: number[] = [];
  faultAt: number | undefined;
  primary: string;
  private uid = 0;
  private loadPods = new Map<
    string,
    { pod: PodState; loadS: number; prefix: string; startedAt: number; first: boolean }
  >();

  constructor(readonly o: FakeKubeOptions) {
    const names =
      o.mode === "replication"
        ? ["valkey-0", "valkey-1", "valkey-2"]
        : ["member-0", "member-1", "member-2", "member-3", "member-4", "member-5"];
    names.forEach((n, i) => this.pods.push(this.pod(n, `zone-${"abc"[i % 3]}`, { app: "valkey" }, i)));
    if (o.mode === "replication")
      ["a", "b", "c"].forEach((z, i) =>
        this.pods.push(this.pod(`sentinel-${i}`, `zone-${z}`, { app: "sentinel" }, 10 + i)),
      );
    this.primary = names[0]!;
  }

  private pod(name: string, zone: string, labels: Record<string, string>, ip: number): PodState {
    return {
      name,
      uid: `uid-${++this.uid}`,
      nodeName: `node-${zone.slice(-1)}`,
      podIP: `10.0.0.${ip}`,
      phase: "Running",
      ready: true,
      deleting: false,
      labels,
      zone,
      createdAt: this.o.clock.now() - 60_000,
      scheduledAt: this.o.clock.now() - 60_000,
    };
  }

  /**
   * Pods as the API would show them now: recreated ones Pending while their node is cordoned, then Ready after readyMs.
   */
  private view(): PodState[] {
    const now = this.o.clock.now();
    this.pods = this.pods.filter((p) => p.removeAt === undefined || p.removeAt > now);
    for (const l of this.loadPods.values()) {
      l.pod.phase = now < l.startedAt ? "Pending" : now < l.startedAt + l.loadS * 1000 ? "Running" : "Succeeded";
    }
    return this.pods
      .filter((p) => p.labels["job"] !== undefined || p.createdAt <= now)
      .map((p) => {
        if (p.labels["job"] !== undefined) return p;
        const node = this.nodes.find((n) => n.labels["topology.kubernetes.io/zone"] === p.zone)!;
        if (p.nodeName === undefined && !node.unschedulable) {
          p.nodeName = node.name;
          p.scheduledAt = now;
        }
        const scheduled = p.nodeName !== undefined;
        const ready = scheduled && now >= p.scheduledAt + (this.o.readyMs ?? 3000);
        return { ...p, phase: scheduled ? "Running" : "Pending", ready: ready && !p.deleting };
      });
  }

  readonly agents: FakeAgent[] = [];

  private agentView(a: FakeAgent): DrillPod & { log: string } {
    const now = this.o.clock.now();
    const restoredAt = a.restoredAt ?? (a.injectAt + a.holdMs <= now ? a.injectAt + a.holdMs : undefined);
    const log =
      this.o.agentFails !== undefined
        ? now >= a.injectAt
          ? this.o.agentFails
          : ""
        : [
            ...(now >= a.injectAt ? [`fault-agent: injected ${a.injectAt} valkey-server 4242 (fake)`] : []),
            ...(restoredAt !== undefined && now >= restoredAt ? [`fault-agent: restored ${restoredAt}`] : []),
          ].join("\n");
    const phase =
      now < a.createdAt + 1000
        ? "Pending"
        : this.o.agentFails !== undefined && now >= a.injectAt
          ? "Failed"
          : restoredAt !== undefined && now >= restoredAt
            ? "Succeeded"
            : "Running";
    return {
      name: a.name,
      uid: `agent-${a.name}`,
      nodeName: "node-a",
      podIP: undefined,
      phase,
      ready: phase === "Running",
      deleting: false,
      labels: {},
      log,
    };
  }

  /** Whether an agent holds its fault now (the fake's primary is unreachable then). */
  private holding(): boolean {
    const now = this.o.clock.now();
    return this.agents.some(
      (a) => this.o.agentFails === undefined && now >= a.injectAt && (a.restoredAt ?? a.injectAt + a.holdMs) > now,
    );
  }

  createPod(_ns: string, body: Record<string, unknown>): Promise<void> {
    const meta = body["metadata"] as { name: string };
    const spec = body["spec"] as { nodeName: string; containers: { env: { name: string; value: string }[] }[] };
    const env = Object.fromEntries(spec.containers[0]!.env.map((e) => [e.name, e.value]));
    const now = this.o.clock.now();
    const injectAt = now + (this.o.agentStartMs ?? 3000);
    this.calls.push(
      `create agent ${meta.name} on ${spec.nodeName}: ${env["FAULT"]} ${env["TARGET_POD_UID"]} hold ${env["HOLD_S"]} s`,
    );
    this.agents.push({ name: meta.name, body, env, createdAt: now, injectAt, holdMs: Number(env["HOLD_S"]) * 1000 });
    if (this.o.agentFails === undefined) {
      this.faultAt = injectAt;
      // The Sentinels (or the replica) promote another member while the primary is held.
      this.primary =
        this.pods.find((p) => p.labels["app"] === "valkey" && p.name !== this.primary && !p.deleting)?.name ??
        this.primary;
    }
    return Promise.resolve();
  }

  listPods(_ns: string, selector: string): Promise<DrillPod[]> {
    const [k, v] = selector.split("=");
    if (k === "valkey-on-eks/drill-agent") {
      return Promise.resolve(
        this.agents
          .filter((a) => a.name === v && a.deletedAt === undefined)
          .map((a) => ({ ...this.agentView(a), log: undefined }) as unknown as DrillPod),
      );
    }
    const all = this.view();
    const pick =
      k === "valkey-on-eks/drill-run"
        ? all.filter((p) => p.labels["run"] === v)
        : all.filter((p) => p.labels[k!] === v);
    return Promise.resolve(
      pick.map(({ zone: _z, createdAt: _c, removeAt: _r, scheduledAt: _s, ...p }) => ({
        ...p,
        labels: { ...p.labels },
      })),
    );
  }

  /** Refusals (HTTP 429) before an eviction goes through. */
  evictionRefusals = 0;

  async evictPod(ns: string, name: string): Promise<"evicted" | "blocked"> {
    this.calls.push(`evict ${name}`);
    if (this.evictionRefusals > 0) {
      this.evictionRefusals--;
      return "blocked";
    }
    await this.deletePod(ns, name, undefined);
    return "evicted";
  }

  deletePod(_ns: string, name: string, grace: number | undefined): Promise<void> {
    this.calls.push(`delete ${name} grace=${grace ?? "default"}`);
    const agent = this.agents.find((a) => a.name === name && a.deletedAt === undefined);
    if (agent !== undefined) {
      // SIGTERM: the agent undoes a fault it still holds, then its pod goes (grace 0: at once).
      const now = this.o.clock.now();
      if (now >= agent.injectAt && agent.restoredAt === undefined && agent.injectAt + agent.holdMs > now)
        agent.restoredAt = now;
      if (grace === 0) agent.deletedAt = now;
      return Promise.resolve();
    }
    const now = this.o.clock.now();
    this.faultAt ??= now;
    const old = this.pods.find((p) => p.name === name && !p.deleting);
    if (old === undefined) return Promise.resolve();
    const removeAt = grace === 0 ? now : now + (this.o.graceMs ?? 2000);
    old.deleting = true;
    old.removeAt = removeAt;
    if (name === this.primary)
      this.primary =
        this.pods.find((p) => p.labels["app"] === "valkey" && p.name !== name && !p.deleting)?.name ?? name;
    const back = this.pod(name, old.zone, old.labels, Number(old.podIP!.split(".")[3]) + 100);
    back.nodeName = undefined;
    back.createdAt = removeAt + (this.o.recreateMs ?? 5000);
    this.pods.push(back);
    return Promise.resolve();
  }

  listNodes(selector?: string): Promise<DrillNode[]> {
    const [k, v] = (selector ?? "=").split("=");
    return Promise.resolve(
      this.nodes.filter((n) => selector === undefined || n.labels[k!] === v).map((n) => ({ ...n })),
    );
  }

  setUnschedulable(node: string, value: boolean): Promise<void> {
    this.calls.push(
      `${value ? "cordon" : "uncordon"} ${node} at +${this.o.clock.now() - (this.faultAt ?? this.o.clock.now())}`,
    );
    this.nodes.find((n) => n.name === node)!.unschedulable = value;
    return Promise.resolve();
  }

  createLoad(m: DrillLoadManifests): Promise<void> {
    this.created.push(m);
    const name = m.job.metadata.name;
    this.calls.push(`create ${name}`);
    const env = Object.fromEntries(m.job.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    const run = m.job.metadata.labels["valkey-on-eks/drill-run"]!;
    const pod: PodState = {
      ...this.pod(`${name}-x1`, "zone-b", { job: name, run }, 50),
      createdAt: this.o.clock.now(),
      phase: "Pending",
    };
    this.pods.push(pod);
    this.loadPods.set(name, {
      pod,
      loadS: Number(env["DRILL_LOAD_S"]),
      prefix: env["DRILL_KEY_PREFIX"]!,
      startedAt: this.o.clock.now() + 4000,
      first: this.created.length === 1,
    });
    this.loadRunningAt.push(this.o.clock.now() + 4000);
    return Promise.resolve();
  }

  deleteLoad(_ns: string, name: string): Promise<void> {
    this.calls.push(`delete load ${name}`);
    const l = this.loadPods.get(name);
    if (l !== undefined) this.pods = this.pods.filter((p) => p !== l.pod);
    this.loadPods.delete(name);
    return Promise.resolve();
  }

  jobState(_ns: string, name: string): Promise<{ succeeded: number; failed: number } | undefined> {
    const l = this.loadPods.get(name);
    if (l === undefined) return Promise.resolve(undefined);
    this.view();
    return Promise.resolve({ succeeded: l.pod.phase === "Succeeded" ? 1 : 0, failed: 0 });
  }

  deletePvc(_ns: string, name: string): Promise<void> {
    this.calls.push(`delete pvc ${name}`);
    this.faultAt ??= this.o.clock.now();
    return Promise.resolve();
  }

  /** exec: the crash command restarts the pod's container in place (restartCount + 1, not Ready for readyMs). */
  exec(_ns: string, pod: string, container: string, command: string[]): Promise<ExecResult> {
    this.calls.push(`exec ${pod}/${container} ${command.join(" ")}`);
    if (this.o.execFails !== undefined) return Promise.reject(new Error(this.o.execFails));
    if (this.o.execExit !== undefined) return Promise.resolve(this.o.execExit);
    this.faultAt ??= this.o.clock.now();
    const p = this.pods.find((x) => x.name === pod && !x.deleting);
    if (p !== undefined) {
      p.restarts = (p.restarts ?? 0) + 1;
      p.scheduledAt = this.o.clock.now();
    }
    // As on a real kubelet: the server's exit ends the container, and the exec's shell is killed with it.
    return Promise.resolve({ exitCode: KILLED_WITH_CONTAINER, stderr: "" });
  }

  /** Keys the read-back finds (all acknowledged ones, minus those lost). */
  readonly stored = new Map<string, string>();

  podLog(_ns: string, pod: string, container: string): Promise<string> {
    const agent = this.agents.find((a) => a.name === pod && a.deletedAt === undefined);
    if (agent !== undefined && container === "fault") return Promise.resolve(this.agentView(agent).log);
    const l = [...this.loadPods.values()].find((x) => x.pod.name === pod);
    if (l === undefined || container !== "drill-load") return Promise.reject(new Error(`no pod ${pod}/${container}`));
    // Until the Job is done its log has only the writing line (the records come at the end).
    this.view();
    const writing = formatWritingLine(l.first ? (this.o.silentOnFirstLoad ?? []) : []);
    if (l.pod.phase !== "Succeeded") return Promise.resolve(this.o.silentLoad === true ? "" : writing);
    const records: WriteRecord[] = [];
    const streams =
      this.o.mode === "replication"
        ? ["sentinel-client", "write-endpoint"]
        : this.o.shardStreams === true
          ? FAKE_SLOTS.map((r) => `cluster-client@${r}`)
          : ["cluster-client"];
    const fault = this.faultAt ?? Infinity;
    for (const stream of streams) {
      // With shard streams, only the first shard's (member-0, the primary every fault hits) stops.
      const hit = this.o.shardStreams !== true || stream.endsWith(`@${FAKE_SLOTS[0]}`);
      for (let n = 1, t = l.startedAt; t < l.startedAt + l.loadS * 1000; n++, t += 100) {
        const down = hit && t >= fault && t < fault + (this.o.outageMs ?? 4000);
        const key = `${l.prefix}:${stream}:${n}`;
        records.push({
          stream,
          key,
          value: `v${n}`,
          sentAt: t,
          doneAt: t + (down ? 1000 : 2),
          ok: !down,
          waited: !down,
          ...(down ? { error: "timeout" } : {}),
        });
        if (
          !down &&
          (this.o.loseAfterFault === undefined ||
            t < fault ||
            t >= fault + (this.o.outageMs ?? 4000) + this.o.loseAfterFault)
        )
          this.stored.set(key, `v${n}`);
      }
    }
    const log =
      writing +
      formatRecordLines({
        prefix: l.prefix,
        loadStart: l.startedAt,
        loadStop: l.startedAt + l.loadS * 1000,
        streams,
        records,
      });
    return Promise.resolve(this.o.log?.(log) ?? log);
  }

  /** The verifier: passes while every member and Sentinel is Ready and not replaced-in-progress. */
  verify = (): Promise<TopologyCheckReport> => {
    const pods = this.view().filter((p) => p.labels["app"] !== undefined);
    const bad = pods.filter((p) => !p.ready);
    if (
      (this.o.neverHeals === true && this.faultAt !== undefined) ||
      bad.length > 0 ||
      pods.length < 6 ||
      this.holding()
    ) {
      return Promise.reject(
        new Error(
          `topology check failed: NODE_UNREACHABLE ${this.holding() ? "(held by the fault agent) " : ""}${bad.map((p) => p.name).join(",")}`,
        ),
      );
    }
    const members = pods.filter((p) => p.labels["app"] === "valkey");
    const addr = (p: PodState): string => `${p.podIP}:6379`;
    const shard = (primary: PodState, replicas: PodState[], slots?: string) => ({
      primary: {
        address: addr(primary),
        zone: primary.zone,
        slotRanges: slots === undefined ? [] : [slots],
        slotCount: 0,
        keys: null,
      },
      replicas: replicas.map((r) => ({
        address: addr(r),
        zone: r.zone,
        crossAz: r.zone !== primary.zone,
        linkUp: true,
      })),
    });
    const primary = members.find((p) => p.name === this.primary)!;
    const shards =
      this.o.mode === "replication"
        ? [
            shard(
              primary,
              members.filter((p) => p !== primary),
            ),
          ]
        : [0, 1, 2].map((i) =>
            shard(members[i]!, [members[i + 3]!], this.o.shardStreams === true ? FAKE_SLOTS[i] : undefined),
          );
    return Promise.resolve({
      ok: true,
      mode: this.o.mode,
      failures: [],
      shards,
      primariesPerZone: {},
      nodeCount: members.length,
    });
  };

  readBack = (keys: readonly string[]): Promise<Map<string, string | undefined>> =>
    Promise.resolve(new Map(keys.map((k) => [k, this.stored.get(k)])));
}
