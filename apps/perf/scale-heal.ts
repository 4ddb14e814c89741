/**
 * The scale ladder's heal step (scale-ladder.ts), as the `all` drill runs it: P × (1 + M) members run as pods run
 * them (harness/drill ClusterTarget: each member's rendered start.sh with heal.sh in the background), formed by the
 * AZ-aware bootstrap. Every shard's primary takes KEYS_PER_SHARD SETs, confirmed on its disk and a replica's
 * (WAITAOF 1 1: durable before the fault, so a missing one is the heal's loss, not the fsync window's); then every
 * member is SIGKILLed and started again RESTART_DELAY_MS later on a NEW address (a node-pool replacement: nodes.conf
 * holds only dead addresses, heal.sh re-meets its peers by their stable names). As root the addresses left are
 * dropped (iptables), as a deleted pod's IP on EKS answers nothing: loopback refuses at once instead, and every
 * server's cluster cron re-dials each link-less peer every 100 ms, which at 200 members took more CPU than this
 * machine has (ClusterTarget blackholeLeftAddresses). Without root they refuse, and the figures say so. The scripts
 * run at their deployed clocks (heal.sh every 2 s, the AZ failback loop every 10 s), not the drills' shorter ones.
 * Measured: from the restart (the members started again, all at once) until the verifier passes (the drills'
 * criterion: every shard, replica link and zone as planned, on every member), and within it until every member
 * answers PING again (the machine's cost of starting that many processes at once); and how many confirmed keys
 * read back. Measured a second way: until every member's own heal.sh said it was done ("cluster_state:ok with all N
 * peers connected, each answering at its address", read from the members' stderr), each judging from its own view.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { partitionCapability } from "../../harness/drill/partition.js";

const KEYS_PER_SHARD = 20;
/** The members' niceness (ClusterTargetOptions.membersNice): the lowest weight, so the measuring is not starved. */
const MEMBERS_NICE = 19;
const RESTART_DELAY_MS = 1000;
/** The deployed heal.sh's own deadline is 600 s (pod/cluster-heal-script.ts); the local pods' is 120 s. */
const HEAL_TIMEOUT_MS = 600_000;
/** heal.sh's last line when it proved every peer at its address (pod/scripts/cluster-heal.sh). */
const HEALED_LINE = /heal: cluster_state:ok with all \d+ peers connected/;

export interface HealFigures {
  /** The restart → every member answering PING on its new address, as this process saw it. */
  restartMs: number;
  /** The restart → the last member's own log said "Ready to accept connections" (its own clock: the second measure). */
  readyMs: number | undefined;
  /** The restart → the verifier passes. */
  healMs: number;
  /** The restart → every member's heal.sh said it was healed (its own view; the second measure). */
  scriptsMs: number;
  keys: number;
  /** Confirmed keys that read back with another value or none. */
  lost: number;
  /** Confirmed keys no node answered for (a slot left unserved). */
  unknown: number;
  /** "dropped" (as a deleted pod's IP on EKS answers nothing), or "refused: <why not dropped>" (loopback's answer). */
  leftAddresses: string;
}

export interface HealOptions {
  primaries: number;
  replicas: number;
  zones: readonly string[];
  nodeTimeoutMs: number;
  /** The first member's loopback address number (cluster-pod.ts loopbackHost). */
  hostBase: number;
}

/**
 * When a server's log text last said it was ready: the local-time stamp of its last "Ready to accept connections"
 * line (`pid:role dd Mon yyyy hh:mm:ss.mmm`), read in this process's zone; undefined without one.
 */
export function lastReadyStamp(text: string): number | undefined {
  const line = text.split("\n").findLast((l) => l.includes("Ready to accept connections"));
  const stamp = /^\d+:[A-Z] (\d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2}\.\d{3}) /.exec(line ?? "")?.[1];
  const at = stamp === undefined ? Number.NaN : Date.parse(stamp);
  return Number.isNaN(at) ? undefined : at;
}

/** lastReadyStamp of a server's log file; undefined when it has none or cannot be read. */
function lastReadyAt(logfile: string | undefined): number | undefined {
  if (logfile === undefined) return undefined;
  try {
    return lastReadyStamp(readFileSync(logfile, "utf8"));
  } catch {
    return undefined;
  }
}

/** Every shard's primary: KEYS_PER_SHARD keys in the shard's slot, then WAITAOF 1 1 on that connection. */
async function confirmedKeys(t: ClusterTarget, password: string): Promise<string[]> {
  const shards = await t.loadShards();
  const perShard = await Promise.all(
    shards.map(async (s) => {
      const p = t.pods.find((x) => x.nodeId === s.nodeIds[0]);
      if (p === undefined) throw new Error(`shard ${s.label}: its primary ${s.nodeIds[0]} is not a member`);
      const c = await openClient(p.host, p.port, `${p.host}:${p.port}`, { password, commandTimeoutMs: 15_000 });
      try {
        const keys = Array.from({ length: KEYS_PER_SHARD }, (_, n) => `{${s.tag}}:heal:${n}`);
        for (const k of keys) {
          const r = await c.set(k, "v");
          if (r !== "OK") throw new Error(`shard ${s.label}: SET ${k} answered ${JSON.stringify(r)}`);
        }
        const w = (await c.call("WAITAOF", "1", "1", "10000")) as [number, number];
        if (w[0] < 1 || w[1] < 1)
          throw new Error(
            `shard ${s.label}: WAITAOF 1 1 answered ${JSON.stringify(w)} (not on disk here and a replica)`,
          );
        return keys;
      } finally {
        c.disconnect();
      }
    }),
  );
  return perShard.flat();
}

/** A fresh cluster of that shape, its members run as pods run them (every process stopped by the caller). */
function startHealCluster(
  o: HealOptions,
  password: string,
  drop: ReturnType<typeof partitionCapability>,
): Promise<ClusterTarget> {
  return ClusterTarget.start({
    primaries: o.primaries,
    replicasPerPrimary: o.replicas,
    zones: o.zones,
    password,
    hostBase: o.hostBase,
    failureDetectionMs: o.nodeTimeoutMs,
    failoverTimeoutMs: 2 * o.nodeTimeoutMs,
    restartDelayMs: RESTART_DELAY_MS,
    zoneDownMs: RESTART_DELAY_MS,
    bootstrapTimeoutMs: 300_000,
    deployedScriptClocks: true,
    // The first start's gate would ask every peer (N² processes here, N per pod on EKS); the heal is what is measured.
    firstStartPeersListed: false,
    // The restart is what is measured: a member slow to answer under the restart's load is a figure, not a failure.
    startTimeoutMs: HEAL_TIMEOUT_MS,
    // Not niced, 200 members' own loops kept this process (which starts them, and whose verifier is the measure) at
    // one share among ~370 runnable: spawning them took 110 s and their answers were seen up to 190 s after their
    // logs said ready (2026-12-04). Niced alike, they keep their shares among themselves.
    membersNice: MEMBERS_NICE,
    ...(drop.ok ? { blackholeLeftAddresses: drop.iptables } : {}),
  });
}

/** One full restart of a fresh cluster of that shape, measured (every process stopped after). */
export async function healAfterFullRestart(o: HealOptions): Promise<HealFigures> {
  const password = randomBytes(12).toString("hex");
  const drop = partitionCapability();
  const t = await startHealCluster(o, password, drop);
  try {
    const keys = await confirmedKeys(t, password);
    const handle = await t.inject("all");
    // inject("all") returns once every member is killed; they start again RESTART_DELAY_MS later.
    const restartAt = performance.now() + RESTART_DELAY_MS;
    const restartWall = Date.now() + RESTART_DELAY_MS;
    await handle.restored;
    const restoredAt = performance.now();
    const ready = t.pods.map((p) => lastReadyAt(p.proc?.logfile));
    const readyMs = ready.every((x) => x !== undefined) ? Math.max(...ready) - restartWall : undefined;
    try {
      await pollUntil(
        async () => {
          const r = await t.verify().catch((e: unknown) => ({ ok: false as const, error: (e as Error).message }));
          if (r.ok) return true;
          return "error" in r ? r.error : r.failures.map((f) => f.code).join(", ");
        },
        { timeoutMs: HEAL_TIMEOUT_MS, intervalMs: 250, what: `the verifier to pass after every member restarted` },
      );
    } finally {
      handle.stopWatching();
    }
    const healMs = performance.now() - restartAt;
    await pollUntil(
      () => {
        const said = t.pods.map((p) => p.proc?.stderr() ?? "");
        const gaveUp = t.pods.flatMap((p, i) => {
          const line = (said[i] as string).split("\n").find((l) => /heal: .*giving up/.test(l));
          return line === undefined ? [] : [`${p.name}: ${line.trim()}`];
        });
        // The verifier's figure is kept in the message: it passed, a member's own script did not.
        if (gaveUp.length > 0)
          throw new Error(
            `the verifier passed ${(healMs / 1000).toFixed(1)} s after the restart, but heal.sh gave up on ${gaveUp.join("; ")}`,
          );
        const pending = t.pods.filter((_, i) => !HEALED_LINE.test(said[i] as string)).map((p) => p.name);
        return Promise.resolve(pending.length === 0 ? true : `heal.sh not done on ${pending.join(", ")}`);
      },
      { timeoutMs: HEAL_TIMEOUT_MS, intervalMs: 250, what: "every member's heal.sh to say it was healed" },
    );
    const scriptsMs = performance.now() - restartAt;
    const back = await t.readBack(keys);
    let lost = 0;
    let unknown = 0;
    // readBack: a key absent on its node maps to undefined; a key no node answered for is not in the map.
    for (const k of keys) {
      if (!back.has(k)) unknown++;
      else if (back.get(k) !== "v") lost++;
    }
    const leftAddresses = drop.ok ? "dropped" : `refused: ${drop.reason}`;
    return {
      restartMs: restoredAt - restartAt,
      readyMs,
      healMs,
      scriptsMs,
      keys: keys.length,
      lost,
      unknown,
      leftAddresses,
    };
  } finally {
    await t.stop();
  }
}
