/**
 * Scaling a cluster in on REAL valkey-server processes, under the drill's write load with its
 * acknowledged-write ledger: 4x1 -> 3x1 with MIGRATE-based resharding (after a memory refusal
 * that changes nothing), interrupted after the first batch of slots and with one slot left half
 * moved, then run again to the end; 6x1 -> 3x1 with atomic slot migration; and 4x1 -> 3x1 after
 * failovers left two primaries on the leaving pods (a kept replica takes its shard back first). Each
 * time: every preloaded key and every acknowledged write reads back, the leaving processes are
 * stopped, and the verifier passes on the kept members with their zones.
 */
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scaleIn, type ScaleInOptions } from "../../core/bootstrap/cluster-scale-in.js";
import { ScaleInRefused } from "../../core/bootstrap/cluster-scale-in-plan.js";
import { localMember, startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { clusterClient, WriteStream } from "../../core/drill/load.js";
import { streamFigures } from "../../core/drill/ledger.js";
import { readInBatches } from "../../core/drill/target.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];
const connector = new DirectConnector({ password });
const PRELOAD = 3000;

async function start(fleet: LocalFleet, primaries: number): Promise<LocalCluster> {
  const cluster = await startLocalCluster(fleet, {
    primaries,
    replicasPerPrimary: 1,
    zones,
    password,
    clusterNodeTimeoutMs: 2000,
  });
  const c = clusterClient(
    [{ host: cluster.seed.host, port: cluster.seed.port }],
    password,
    5000,
    () => undefined,
    true,
  );
  try {
    for (let i = 0; i < PRELOAD; i += 100)
      await Promise.all(Array.from({ length: 100 }, (_, k) => c.set(`pre:${i + k}`, `v${i + k}`)));
  } finally {
    c.disconnect();
  }
  return cluster;
}

/** The scale-in options for keeping the first `keep` processes (the lowest ordinals). */
function options(cluster: LocalCluster, keep: number, extra: Partial<ScaleInOptions> = {}): ScaleInOptions {
  return {
    members: cluster.nodes.map((n) => localMember(n, cluster.zoneMap[n.address] as string)),
    kept: cluster.nodes.slice(0, keep).map((n) => n.address),
    primaries: 3,
    replicasPerPrimary: 1,
    connector,
    password,
    timeoutMs: 30_000,
    ...extra,
  };
}

/**
 * Runs `during` under the drill's write load; returns the ledger's figures with every preloaded and acknowledged key
 * read back.
 */
async function underLoad(cluster: LocalCluster, during: () => Promise<void>) {
  const seeds = [{ host: cluster.seed.host, port: cluster.seed.port }];
  const stream = new WriteStream({
    stream: "cluster-client",
    prefix: "load",
    rate: 200,
    waitTimeoutMs: 200,
    client: { kind: "cluster", client: clusterClient(seeds, password, 2000, () => undefined) },
  });
  const loadStart = Date.now();
  stream.start();
  await new Promise((r) => setTimeout(r, 500));
  const faultAt = Date.now();
  const t0 = performance.now();
  try {
    await during();
  } finally {
    await new Promise((r) => setTimeout(r, 500));
    await stream.stop();
  }
  const ms = Math.round(performance.now() - t0);
  const reader = clusterClient(seeds, password, 5000, () => undefined, true);
  try {
    const keys = [
      ...stream.records.filter((r) => r.ok).map((r) => r.key),
      ...Array.from({ length: PRELOAD }, (_, i) => `pre:${i}`),
    ];
    const readBack = await readInBatches(keys, (batch) => Promise.all(batch.map((k) => reader.get(k))));
    const figures = streamFigures("cluster-client", {
      records: stream.records,
      readBack,
      faultAt,
      loadStart,
      loadStop: Date.now(),
    });
    const preLost = Array.from({ length: PRELOAD }, (_, i) => i).filter((i) => readBack.get(`pre:${i}`) !== `v${i}`);
    return { figures, preLost, ms };
  } finally {
    reader.disconnect();
  }
}

/** Stops the leaving processes, then verifies the kept ones: 3 shards x 1 cross-zone replica, every key there. */
async function stopLeavingAndVerify(cluster: LocalCluster, keep: number, ackedKeys: number): Promise<void> {
  await Promise.all(cluster.nodes.slice(keep).map((n) => n.stop()));
  const kept = cluster.nodes.slice(0, keep);
  for (const n of kept) {
    const c = await connector.connect({ host: n.host, port: n.port });
    const view = (await c.call("CLUSTER", "NODES")) as string;
    c.disconnect();
    expect(view.match(/\[\d+-[<>]-\w+\]/g) ?? [], `slots left MIGRATING/IMPORTING on ${n.address}`).toEqual([]);
  }
  const report = await verifyTopology({
    mode: "cluster",
    seeds: kept.map((n) => ({ host: n.host, port: n.port })),
    connector,
    zones: new StaticZoneSource(cluster.zoneMap),
    expect: { primaries: 3, replicasPerPrimary: 1 },
  });
  expect(report.failures).toEqual([]);
  expect(report.shards.map((s) => s.primary.slotCount).sort()).toEqual([5461, 5461, 5462]);
  expect(new Set(report.shards.map((s) => s.primary.zone)).size).toBe(3);
  expect(report.shards.every((s) => s.replicas.length === 1 && s.replicas.every((r) => r.crossAz && r.linkUp))).toBe(
    true,
  );
  expect(report.shards.reduce((n, s) => n + (s.primary.keys ?? 0), 0)).toBe(PRELOAD + ackedKeys);
}

describe("scaling a 4x1 cluster in to 3x1 (MIGRATE), interrupted and resumed, on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await start(fleet, 4);
  });
  afterAll(() => fleet.stopAll());

  it("refuses, changing nothing, when the kept primaries' maxmemory cannot hold the data", async () => {
    const kept = cluster.nodes.slice(0, 6);
    const clients = await Promise.all(kept.map((n) => connector.connect({ host: n.host, port: n.port })));
    try {
      for (const c of clients)
        await c.call(
          "CONFIG",
          "SET",
          "maxmemory",
          String(Number(/used_memory:(\d+)/.exec(await c.info("memory"))?.[1]) + 200_000),
        );
      await expect(scaleIn(options(cluster, 6))).rejects.toThrow(ScaleInRefused);
      await expect(scaleIn(options(cluster, 6))).rejects.toThrow(
        /cannot hold the data.*would hold about [\d.]+ MiB \(now [\d.]+ MiB\) of maxmemory [\d.]+ MiB/,
      );
      const nodes = (await clients[0]?.call("CLUSTER", "NODES")) as string;
      expect(nodes.split("\n").filter((l) => / connected \d/.test(l)).length).toBe(4);
    } finally {
      for (const c of clients) {
        await c.call("CONFIG", "SET", "maxmemory", "0");
        c.disconnect();
      }
    }
  });

  it("finishes after an interruption and a half-moved slot, with no key and no acknowledged write lost", async () => {
    const steps: string[] = [];
    let halfMoved = -1;
    const { figures, preLost, ms } = await underLoad(cluster, async () => {
      const interrupted = scaleIn(
        options(cluster, 6, {
          slotMigration: "migrate",
          onStep: (s) => {
            steps.push(s);
            if (/^moved \d+\/\d+ slots/.test(s)) throw new Error("interrupted on purpose");
          },
        }),
      );
      await expect(interrupted).rejects.toThrow(/interrupted on purpose/);
      halfMoved = await leaveOneSlotHalfMoved(cluster);
      const result = await scaleIn(options(cluster, 6, { slotMigration: "migrate", onStep: (s) => steps.push(s) }));
      expect(result.changed).toBe(true);
    });
    console.log(
      `4x1 -> 3x1 MIGRATE (interrupted, resumed): ${ms} ms, ${figures.ackedWrites}/${figures.writes} writes acknowledged, ` +
        `${figures.lostAckedWrites} lost, outage ${Math.round(figures.writeOutageMs)} ms\n  ${steps.filter((x) => !/^moved \d+\/\d+ slots/.test(x)).join("\n  ")}`,
    );
    expect(halfMoved).toBeGreaterThanOrEqual(0);
    expect(steps.some((s) => /finished 1 slot move\(s\) an earlier run left half done/.test(s))).toBe(true);
    expect(preLost).toEqual([]);
    expect(figures.ackedWrites).toBeGreaterThan(0);
    expect(figures.unknownWrites).toBe(0);
    expect(figures.lostAckedWrites).toBe(0);
    await stopLeavingAndVerify(cluster, 6, figures.ackedWrites);
  }, 240_000);
});

describe("scaling a 6x1 cluster in to 3x1 (atomic slot migration) on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await start(fleet, 6);
  });
  afterAll(() => fleet.stopAll());

  it("moves the leaving shard's slots under load, loses no key and no acknowledged write, and the verifier passes", async () => {
    const steps: string[] = [];
    const { figures, preLost, ms } = await underLoad(cluster, async () => {
      const result = await scaleIn(options(cluster, 6, { onStep: (s) => steps.push(s) }));
      expect(result.changed).toBe(true);
    });
    console.log(
      `6x1 -> 3x1 atomic: ${ms} ms, ${figures.ackedWrites}/${figures.writes} writes acknowledged, ${figures.lostAckedWrites} lost, ` +
        `outage ${Math.round(figures.writeOutageMs)} ms\n  ${steps.join("\n  ")}`,
    );
    expect(steps.some((s) => /atomic slot migration/.test(s))).toBe(true);
    expect(preLost).toEqual([]);
    expect(figures.ackedWrites).toBeGreaterThan(0);
    expect(figures.unknownWrites).toBe(0);
    expect(figures.lostAckedWrites).toBe(0);
    const again = await scaleIn(options(cluster, 6));
    expect(again.steps).toEqual([]);
    expect(again.changed).toBe(false);
    await stopLeavingAndVerify(cluster, 6, figures.ackedWrites);
  });
});

describe("a whole shard leaving (the shape a scale-out added) on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await start(fleet, 4);
  });
  afterAll(() => fleet.stopAll());

  it("its primary ends an empty primary with its replica beside it: the kept members serve neither a full sync", async () => {
    // The shards of the first three primaries stay (each primary with its replica), the fourth goes whole.
    const primaries = cluster.nodes.slice(0, 3).map((n) => n.port);
    const kept = [...cluster.nodes.slice(0, 3)];
    for (const n of cluster.nodes.slice(3)) {
      const c = await connector.connect({ host: n.host, port: n.port });
      const port = Number(/master_port:(\d+)/.exec(await c.info("replication"))?.[1]);
      c.disconnect();
      if (primaries.includes(port)) kept.push(n);
    }
    expect(kept).toHaveLength(6);
    const leaving = cluster.nodes.filter((n) => !kept.includes(n));
    await scaleIn({ ...options(cluster, 6), kept: kept.map((n) => n.address) });
    const log = (n: (typeof kept)[number]): string => readFileSync(n.logfile, "utf8");
    // With Valkey's default cluster-allow-replica-migration (yes) both followed the last slot to a kept primary, each
    // with a full sync ("Full resync requested by replica <leaving>" in that primary's log): 2 per leaving shard.
    for (const k of kept)
      for (const l of leaving) expect(log(k), k.address).not.toContain(`requested by replica ${l.address}`);
    expect(leaving.map(log).join("\n")).toContain("I am now an empty primary");
  }, 120_000);
});

describe("scaling in when failovers left the primaries on the leaving pods", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await start(fleet, 4);
  });
  afterAll(() => fleet.stopAll());

  it("fails over to kept replicas first, then scales 4x1 -> 3x1 with every key kept", async () => {
    // The replicas on the two highest ordinals take over their shards: the kept pods hold 2 primaries.
    for (const n of cluster.nodes.slice(6)) {
      const c = await connector.connect({ host: n.host, port: n.port });
      try {
        await c.call("CLUSTER", "FAILOVER");
        await eventually(async () => ((await c.call("ROLE")) as string[])[0] === "master");
      } finally {
        c.disconnect();
      }
    }
    const result = await scaleIn(options(cluster, 6));
    expect(result.steps.filter((s) => /took over its shard from a leaving primary/.test(s)).length).toBeGreaterThan(0);
    await stopLeavingAndVerify(cluster, 6, 0);
  });
});

async function eventually(probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("timed out");
}

/**
 * What a crash in the middle of one slot's MIGRATE leaves: a preloaded key's slot marked
 * MIGRATING on its owner and IMPORTING on another primary, with its first key already moved.
 * Returns the slot.
 */
async function leaveOneSlotHalfMoved(cluster: LocalCluster): Promise<number> {
  const clients = await Promise.all(
    cluster.nodes.slice(0, 6).map((n) => connector.connect({ host: n.host, port: n.port })),
  );
  try {
    const roles = await Promise.all(clients.map(async (c) => ((await c.call("ROLE")) as string[])[0]));
    const primaries = clients.filter((_, i) => roles[i] === "master");
    const ids = await Promise.all(primaries.map(async (c) => (await c.call("CLUSTER", "MYID")) as string));
    for (let k = 0; k < PRELOAD; k++) {
      const slot = String(await primaries[0]?.call("CLUSTER", "KEYSLOT", `pre:${k}`));
      const counts = await Promise.all(
        primaries.map(async (c) => Number(await c.call("CLUSTER", "COUNTKEYSINSLOT", slot))),
      );
      const src = counts.findIndex((n) => n >= 2);
      if (src < 0) continue;
      const dst = (src + 1) % primaries.length;
      const [from, to] = [primaries[src], primaries[dst]] as [Redis, Redis];
      const keys = (await from.call("CLUSTER", "GETKEYSINSLOT", slot, "10")) as string[];
      await to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src] as string);
      await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst] as string);
      const { host, port } = to.options as { host: string; port: number };
      await from.call("MIGRATE", host, String(port), "", "0", "5000", "AUTH", password, "KEYS", keys[0] as string);
      return Number(slot);
    }
    throw new Error("no slot holding two preloaded keys");
  } finally {
    for (const c of clients) c.disconnect();
  }
}
