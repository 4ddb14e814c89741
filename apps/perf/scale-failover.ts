/**
 * The scale ladder's failover step (scale-ladder.ts): ceil(P / 10) primaries SIGKILLed at once (every tenth shard),
 * one writer per affected shard as an application without WAIT, until each such shard's replica takes a SET; then
 * each writer's acknowledged (OK) writes its new primary lacks.
 */
import type { Redis } from "ioredis";
import type { ClusterPlan } from "../../core/bootstrap/az-aware-planner.js";
import type { BootstrapResult } from "../../core/bootstrap/cluster-bootstrap.js";
import { loadShardsOf } from "../../core/drill/load-shards.js";
import { openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import type { ValkeyProcess } from "../../harness/local/valkey-process.js";

/** The failover's writers together: acknowledged (OK) writes, those the new primaries lack, per shard. */
export interface FailoverWrites {
  acked: number;
  lost: number;
  lostPerShard: Record<string, number>;
  /** How long before the kill the oldest lost write was acknowledged (the async replication window); null: none. */
  oldestLostMsBeforeKill: number | null;
}

/**
 * One writer on a shard's primary, as an application without WAIT: SET `{key}:n` one after the other (each waits
 * for its reply), an acknowledgement being the reply OK itself. Stopped by stop(); `acked` keeps each OK's time.
 */
class ShardWriter {
  readonly acked: { key: string; at: number }[] = [];
  private running = true;
  private done: Promise<void>;
  constructor(
    private readonly c: Redis,
    private readonly tag: string,
  ) {
    this.done = this.loop();
  }
  private async loop(): Promise<void> {
    for (let n = 0; this.running; n++) {
      const key = `{${this.tag}}:${n}`;
      const r = await this.c.set(key, "v").catch(() => null);
      if (r === "OK") this.acked.push({ key, at: Date.now() });
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

interface Victim {
  shard: string;
  key: string;
  /** On the shard's replica: takes the key's SET once promoted. */
  replica: Redis;
  writer: ShardWriter;
  writable: boolean;
}

/** Every tenth shard's primary killed at once, writers on each: until each such shard takes writes again. */
export async function failover(
  boot: BootstrapResult & { plan: ClusterPlan },
  byAddress: Map<string, ValkeyProcess>,
  clients: Redis[],
) {
  const { plan, nodeIds } = boot;
  const shards = plan.shards.filter((_, i) => i % 10 === 0);
  const node = (id: string | undefined): ValkeyProcess => byAddress.get(id ?? "") as ValkeyProcess;
  const open = async (p: ValkeyProcess): Promise<Redis> => {
    const c = await openClient(p.host, p.port, p.address, { commandTimeoutMs: 1000 });
    clients.push(c);
    return c;
  };
  // Each shard's hash tag, as the drills find it (CLUSTER KEYSLOT on a live member).
  const tags = await loadShardsOf(node(plan.shards[1]?.primary.id), undefined);
  const victims: Victim[] = await Promise.all(
    shards.map(async (s) => {
      const key = tags.find((t) => t.nodeIds[0] === nodeIds[s.primary.id])?.tag;
      if (key === undefined) throw new Error(`no hash tag found for the shard of ${s.primary.id}`);
      const writer = new ShardWriter(await open(node(s.primary.id)), key);
      const replica = await open(node(s.replicas[0]?.id));
      return { shard: `${s.slots.start}-${s.slots.end}`, key, replica, writer, writable: false };
    }),
  );
  // Writes flowing on every victim shard for a second before the kill.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const t = performance.now();
  const killedAt = Date.now();
  for (const s of shards) node(s.primary.id).signal("SIGKILL");
  await pollUntil(
    async () => {
      const left = victims.filter((x) => !x.writable);
      await Promise.all(
        left.map(async (x) => (x.writable = (await x.replica.set(x.key, "v").catch(() => null)) === "OK")),
      );
      const still = victims.filter((x) => !x.writable).map((x) => x.shard);
      return still.length === 0 ? true : `shards not writable yet: ${still.join(", ")}`;
    },
    { timeoutMs: 60_000, intervalMs: 50, what: `every shard of ${shards.length} killed primaries to take writes` },
  );
  const ms = performance.now() - t;
  return { ms, killed: shards.length, writes: await lostWrites(victims, killedAt) };
}

/** Each victim's acknowledged writes its new primary lacks. */
async function lostWrites(victims: readonly Victim[], killedAt: number): Promise<FailoverWrites> {
  const writes: FailoverWrites = { acked: 0, lost: 0, lostPerShard: {}, oldestLostMsBeforeKill: null };
  for (const x of victims) {
    await x.writer.stop();
    const p = x.replica.pipeline();
    for (const a of x.writer.acked) p.exists(a.key);
    const found = ((await p.exec()) ?? []).map(([err, v]) => (err === null ? Number(v) : -1));
    if (found.some((v) => v < 0)) throw new Error(`shard ${x.shard}: EXISTS failed on its new primary`);
    const lost = x.writer.acked.filter((_, i) => found[i] === 0);
    writes.acked += x.writer.acked.length;
    writes.lost += lost.length;
    writes.lostPerShard[x.shard] = lost.length;
    for (const l of lost) writes.oldestLostMsBeforeKill = Math.max(writes.oldestLostMsBeforeKill ?? 0, killedAt - l.at);
  }
  return writes;
}
