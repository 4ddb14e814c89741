/**
 * The in-cluster drill load: the entry bundled into `load.mjs` (load-bundle.ts) and run by the
 * FailureDrill step's Job (`node /drill/load.mjs`). It runs the same writers as the local
 * drills (load.ts loadStreams: a no-WAIT and a WAIT writer per client path, each write failed at
 * its deadline, the command timeout): cluster mode the slot-aware Cluster client per shard
 * (`cluster-client@<slots>`, hash-tagged keys in that shard's slots, load-shards.ts; the WAIT
 * writer on a plain connection to its slot's primary, slot-owner.ts);
 * replication mode a Sentinel-aware client (`sentinel-client`) and a plain client through the
 * write Service / HAProxy (`write-endpoint`). Once every stream has its first acknowledgement it
 * prints the writing line (record-lines.ts), the drill's cue for its fault; after DRILL_LOAD_S
 * seconds (or at SIGTERM) it stops and prints its records on stdout (record-lines.ts), nothing else. The load starts
 * once every client is
 * connected (bounded: 30 s, else it exits 1), so connecting is not counted as failed writes. The password comes from
 * VALKEY_PASSWORD
 * and is never printed.
 */
import { lookup } from "node:dns/promises";
import { formatRecordLines, formatWritingLine } from "./record-lines.js";
import { loadSettingsFromEnv, type LoadSettings } from "./load-env.js";
import { clusterClient, loadStreams, plainRedis, sentinelRedis, type LoadClient } from "./load.js";
import { loadShardsOf } from "./load-shards.js";
import type { LoadShard } from "./writers.js";
import { clientReady } from "../util/client-ready.js";

/** The client paths, each a factory: every writer gets its own client (load.ts loadStreams). */
async function clients(
  s: LoadSettings,
): Promise<{ paths: { client: string; make: () => LoadClient }[]; shards: LoadShard[] }> {
  if (s.mode === "cluster") {
    // The seed is a Service name: resolve it once (the nodes then announce their pod IPs).
    const ip = (await lookup(s.target.host, { family: 4 })).address;
    const seeds = [{ host: s.target.host, port: s.target.port }];
    const dial = (host: string, port: number) => plainRedis(host, port, s.password, s.commandTimeoutMs);
    const make = (): LoadClient => ({
      kind: "cluster",
      client: clusterClient(seeds, s.password, s.commandTimeoutMs, (h) => (h === s.target.host ? ip : undefined)),
      dial,
    });
    return {
      paths: [{ client: "cluster-client", make }],
      shards: await loadShardsOf({ host: ip, port: s.target.port }, s.password),
    };
  }
  const sentinel = s.sentinel!;
  const dial = () => plainRedis(s.target.host, s.target.port, s.password, s.commandTimeoutMs);
  const paths = [
    {
      client: "sentinel-client",
      make: (): LoadClient => ({
        kind: "redis",
        client: sentinelRedis(
          [{ host: sentinel.host, port: sentinel.port }],
          sentinel.masterName,
          s.password,
          s.commandTimeoutMs,
        ),
      }),
    },
    { client: "write-endpoint", make: (): LoadClient => ({ kind: "redis", client: dial(), redial: dial }) },
  ];
  return { paths, shards: [] };
}

async function main(): Promise<void> {
  const s = loadSettingsFromEnv(process.env);
  const { paths, shards } = await clients(s);
  const streams = loadStreams(paths, shards, {
    prefix: s.keyPrefix,
    rate: s.rate,
    waitTimeoutMs: s.waitTimeoutMs,
    deadlineMs: s.commandTimeoutMs,
  });
  // Connection set-up is not counted as failed writes. Streams can share a client (cluster mode): one wait per client.
  const byClient = new Map<LoadClient["client"], string[]>();
  for (const w of streams) byClient.set(w.loadClient.client, [...(byClient.get(w.loadClient.client) ?? []), w.stream]);
  await Promise.all([...byClient].map(([client, names]) => clientReady(client, names.join(", "), 30_000)));
  const loadStart = Date.now();
  streams.forEach((w) => w.start());
  // The drill injects its fault after this line: once every stream has an acknowledgement, or
  // after 30 s naming those without (a busy node can take seconds to run the first writes).
  const silent = (): string[] => streams.filter((w) => !w.records.some((r) => r.ok)).map((w) => w.stream);
  for (const until = Date.now() + 30_000; silent().length > 0 && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 50));
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(formatWritingLine(silent()), (err) => (err ? reject(err) : resolve())),
  );
  // DRILL_LOAD_S, or less when told to stop (SIGTERM: a pod's container runs this as PID 1,
  // which gets only the signals it handles): the records are printed either way.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, s.loadS * 1000);
    process.once("SIGTERM", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const loadStop = Date.now();
  await Promise.all(streams.map((w) => w.stop()));
  const out = formatRecordLines({
    prefix: s.keyPrefix,
    loadStart,
    loadStop,
    streams: streams.map((w) => w.stream),
    records: streams.flatMap((w) => w.records),
  });
  await new Promise<void>((resolve, reject) => process.stdout.write(out, (err) => (err ? reject(err) : resolve())));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`drill load failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
