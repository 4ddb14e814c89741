/**
 * Backup and restore on real valkey-server processes and a real S3-compatible server (moto in
 * server mode, $MOTO_SERVER), with the scripts the pods run (backup.sh, restore.sh) and the AWS
 * CLI ($AWS_CLI): a 3 x 1 cluster (AOF on) with keys of several types is backed up from its
 * replicas, stopped and its data removed; a NEW cluster whose members run restore.sh before
 * valkey-server forms with the same slot ranges and every key back with its value, key counts per
 * shard equal to the manifest's. A corrupted object, a missing one, a missing manifest and a
 * cluster of another shape each fail the member's start with a clear error: it never runs, so no
 * member starts empty as a primary. Then the same for replication mode (1 + 1, AOF off).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planBackup, targetArg } from "../../core/backup/backup-plan.js";
import {
  planWithScript,
  restoredMemberLaunch,
  restoreMessageFile,
  runLocalBackup,
  scriptEnv,
  startRestoredReplication,
  type LocalBackupResult,
  type S3Env,
} from "../../harness/backup/local-backup.js";
import { restoreCluster } from "../../core/backup/restore-bootstrap.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";
import { bootstrapStep } from "../../components/steps/cluster-bootstrap/declaration.js";
import { bootstrapOnKubernetes } from "../../components/steps/cluster-bootstrap/implementation.js";
import { checkRestoredKeyCounts, checkRestoreShape, plannedRanges } from "../../core/backup/restore-check.js";
import { localMember, startLocalCluster } from "../../harness/local/local-cluster.js";
import { startLocalReplication } from "../../harness/local/local-replication.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { motoBucket, s3ToolsMissing, type MotoServer } from "../support/moto-server.js";
import { parseRestoreMessage } from "../../pod/restore-message.js";
import { callOn } from "../support/processes.js";

const run = promisify(execFile);
const missing = s3ToolsMissing();
const PW = "backup pass'word";
const KEYS = 3000;
const BUCKET = "valkey-backups";

let moto: MotoServer;
let s3: S3Env;
let tmp: string;

const call = (n: ValkeyProcess, ...args: string[]): Promise<string> =>
  callOn(n, PW, args[0] as string, ...args.slice(1));

async function aws(...args: string[]): Promise<string> {
  const env = { ...process.env, ...scriptEnv(s3, join(tmp, "bin"), undefined) };
  return (await run(s3.awsCli, ["--endpoint-url", s3.endpointUrl as string, ...args], { env })).stdout;
}

/** Copies backup `from` to a new prefix (for a negative test to damage) and returns its uri. */
async function copyBackup(from: string, name: string): Promise<string> {
  const to = `s3://${BUCKET}/broken/${name}`;
  await aws("s3", "cp", "--recursive", "--only-show-errors", `${from}/`, `${to}/`);
  return to;
}

beforeAll(async () => {
  if (missing !== undefined) return;
  tmp = mkdtempSync(join(tmpdir(), "valkey-backup-test-"));
  ({ moto, s3 } = await motoBucket("127.0.0.2", BUCKET, join(tmp, "bin")));
}, 60_000);
afterAll(async () => {
  await moto?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(
  `backup and restore through S3${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    describe("cluster mode, 3 x 1", () => {
      let backup: LocalBackupResult;
      const values = new Map<string, string>();
      const members = (
        fleet: LocalFleet,
        shards: (number | "none")[],
        from: string,
        planned = plannedRanges(3),
        o: { prefix?: string; peers?: string[] } = {},
      ): Promise<ValkeyProcess[]> =>
        fleet.startMany(shards.length, (i) => ({
          name: `${o.prefix ?? "restored"}-${i}`,
          clusterEnabled: true,
          startTimeoutMs: 30_000,
          launch: restoredMemberLaunch({
            restore: { mode: "cluster", plannedSlots: planned },
            from,
            shard: shards[i] as number | "none",
            s3,
            server: { clusterEnabled: true, clusterNodeTimeoutMs: 2000, password: PW, appendonly: true },
            binDir: join(tmp, "bin"),
            peers: o.peers,
          }),
        }));

      beforeAll(async () => {
        const fleet = new LocalFleet();
        try {
          const c = await startLocalCluster(fleet, {
            primaries: 3,
            replicasPerPrimary: 1,
            zones: ["a", "b", "c"],
            password: PW,
            clusterNodeTimeoutMs: 2000,
          });
          const client = new Cluster([{ host: c.seed.host, port: c.seed.port }], { redisOptions: { password: PW } });
          try {
            for (let i = 0; i < KEYS; i++) {
              values.set(`k:${i}`, `value-${i}-${"x".repeat(i % 50)}`);
              await client.set(`k:${i}`, values.get(`k:${i}`) as string);
            }
            await client.hset("h:{k:1}", "f", "hv");
            await client.rpush("l:{k:2}", "a", "b");
          } finally {
            client.disconnect();
          }
          for (const p of c.primaries) await call(p, "WAIT", "1", "5000");
          const report = await verifyTopology({
            mode: "cluster",
            seeds: [{ host: c.seed.host, port: c.seed.port }],
            connector: new DirectConnector({ password: PW }),
          });
          const plan = planBackup(report);
          expect(plan.targets.map((t) => t.source)).toEqual(["replica", "replica", "replica"]);
          // backup.sh's own plan (what the CronJob runs) picks the same members.
          const fromScript = await planWithScript({
            dir: join(tmp, "cluster-plan"),
            mode: "cluster",
            host: c.seed.host,
            port: c.seed.port,
            s3,
            password: PW,
          });
          expect(fromScript).toEqual(plan.targets.map(targetArg));
          const replicas = new Set(c.nodes.filter((n) => !c.primaries.includes(n)).map((n) => n.address));
          for (const t of plan.targets) expect(replicas.has(`${t.host}:${t.port}`)).toBe(true);
          backup = await runLocalBackup({
            plan,
            dir: join(tmp, "cluster-backup"),
            uri: `s3://${BUCKET}/prod`,
            id: "cluster-1",
            s3,
            password: PW,
          });
        } finally {
          await fleet.stopAll(); // stops every server and removes every data dir
        }
      }, 120_000);

      it("uploads one RDB per shard and the manifest last, with the shard's slots, keys and sha256", async () => {
        expect(backup.uri).toBe(`s3://${BUCKET}/prod/cluster-1`);
        expect(backup.manifest.shards.map((s) => s.slots)).toEqual(plannedRanges(3));
        expect(backup.manifest.shards.reduce((a, s) => a + s.keys, 0)).toBe(KEYS + 2);
        const listed = await aws("s3", "ls", `${backup.uri}/`);
        for (const name of ["manifest.json", "shard-0.rdb", "shard-1.rdb", "shard-2.rdb"])
          expect(listed).toContain(name);
        expect(backup.stderr).not.toContain(PW);
        const bytes = backup.manifest.shards.reduce((a, s) => a + s.bytes, 0);
        console.log(
          `[backup] ${KEYS + 2} keys, 3 shards, ${bytes} bytes of RDB: snapshot + upload in ${backup.durationMs} ms`,
        );
      });

      it.each(["the restore bootstrap", "the ClusterBootstrap step (restored: true)"])(
        "restores into a new cluster through %s: same slot ranges, every key back with its value, key counts = manifest",
        async (via) => {
          const fleet = new LocalFleet();
          try {
            const t0 = Date.now();
            const nodes = await members(fleet, [0, 1, 2, "none", "none", "none"], backup.uri);
            const restoredAt = Date.now();
            checkRestoreShape(backup.manifest, "cluster", plannedRanges(3));
            let primaries: string[];
            /** The zones the members announce (the step sets them; the core path leaves them unset). */
            let zones: StaticZoneSource | undefined;
            if (via === "the restore bootstrap") {
              const zones = ["a", "b", "c", "b", "c", "a"];
              const { plan } = await restoreCluster({
                shards: backup.manifest.shards.map((s) => ({ ranges: s.slots, keys: s.keys })),
                restored: nodes.slice(0, 3).map((n) => n.address),
                members: nodes.map((n, i) => localMember(n, zones[i] as string)),
                replicasPerPrimary: 1,
                connector: new DirectConnector({ password: PW }),
              });
              primaries = plan.shards.map((s) => s.primary.id);
              expect(primaries).toEqual(nodes.slice(0, 3).map((n) => n.address));
            } else {
              // The deployed path: pods vc-0..vc-5 (a fake Kubernetes API over these processes), vc-0..2 restored.
              const zoneOfNode = { "node-a": "us-west-2a", "node-b": "us-west-2b", "node-c": "us-west-2c" };
              const api = new StaticPodApi(
                nodes.map((n, i) => ({
                  name: `vc-${i}`,
                  podIP: n.host,
                  nodeName: Object.keys(zoneOfNode)[i % 3] as string,
                  labels: { "app.kubernetes.io/instance": "vc" },
                  ports: { "valkey": n.port, "cluster-bus": n.clusterPort ?? 0 },
                })),
                zoneOfNode,
              );
              const inputs = bootstrapStep.parse({
                namespace: "data",
                selector: "app.kubernetes.io/instance=vc",
                kubeconfig: "unused",
                connector: "direct",
                expectedPods: 6,
                primaries: 3,
                replicasPerPrimary: 1,
                restored: true,
              });
              const out = await bootstrapOnKubernetes(
                { ...inputs, password: PW, timeoutMs: 30_000 },
                { podApi: api, connector: () => new DirectConnector({ password: PW }) },
              );
              primaries = out.plan.shards.map((s) => s.primary.pod);
              zones = new StaticZoneSource(
                Object.fromEntries(nodes.map((n, i) => [n.address, Object.values(zoneOfNode)[i % 3] as string])),
              );
              expect(out.plan.shards.map((s) => s.slotRanges)).toEqual(plannedRanges(3));
              expect(primaries).toEqual(["vc-0", "vc-1", "vc-2"]);
            }
            console.log(
              `[restore via ${via}] 6 members started (3 restored) in ${restoredAt - t0} ms; cluster formed and synced in ${Date.now() - restoredAt} ms more`,
            );
            const report = await verifyTopology({
              mode: "cluster",
              seeds: [{ host: nodes[0]!.host, port: nodes[0]!.port }],
              connector: new DirectConnector({ password: PW }),
              zones,
            });
            expect(report.failures).toEqual([]);
            const serving = report.shards.map((s) => ({
              name: s.primary.address,
              slotRanges: s.primary.slotRanges,
              keys: s.primary.keys,
            }));
            const counted = checkRestoredKeyCounts("cluster", backup.manifest.shards, serving);
            expect(counted.problems).toEqual([]);
            expect(counted.shards.map((s) => [s.slots, s.keys])).toEqual(
              backup.manifest.shards.map((s) => [s.slots, s.keys]),
            );
            const client = new Cluster([{ host: nodes[0]!.host, port: nodes[0]!.port }], {
              redisOptions: { password: PW },
            });
            try {
              for (const [k, v] of values) expect(await client.get(k)).toBe(v);
              expect(await client.hget("h:{k:1}", "f")).toBe("hv");
              expect(await client.lrange("l:{k:2}", 0, -1)).toEqual(["a", "b"]);
              // AOF on: the restored data is in the AOF (its base), not only in dump.rdb.
              expect(await call(nodes[0]!, "CONFIG", "GET", "appendonly")).toContain("yes");
            } finally {
              client.disconnect();
            }
            expect(readFileSync(join(nodes[1]!.dir, "restored-from"), "utf8")).toContain(`${backup.uri}/shard-1.rdb`);
          } finally {
            await fleet.stopAll();
          }
        },
        120_000,
      );

      it("restored primaries crowding one zone: a synced replica in another zone takes one over (no zone keeps a primary majority), every key still there", async () => {
        const fleet = new LocalFleet();
        try {
          const nodes = await members(fleet, [0, 1, 2, "none", "none", "none"], backup.uri);
          const zones = ["a", "a", "b", "b", "c", "c"];
          const { steps } = await restoreCluster({
            shards: backup.manifest.shards.map((x) => ({ ranges: x.slots, keys: x.keys })),
            restored: nodes.slice(0, 3).map((n) => n.address),
            members: nodes.map((n, i) => localMember(n, zones[i] as string)),
            replicasPerPrimary: 1,
            connector: new DirectConnector({ password: PW }),
          });
          expect(steps.join("\n")).toMatch(/took shard \d over from .* no zone holds a primary majority/);
          const report = await verifyTopology({
            mode: "cluster",
            seeds: [{ host: nodes[0]!.host, port: nodes[0]!.port }],
            connector: new DirectConnector({ password: PW }),
            zones: new StaticZoneSource(Object.fromEntries(nodes.map((n, i) => [n.address, zones[i] as string]))),
          });
          expect(report.failures).toEqual([]);
          expect(Math.max(...Object.values(report.primariesPerZone))).toBe(1);
          expect(report.shards.reduce((a, x) => a + (x.primary.keys ?? 0), 0)).toBe(KEYS + 2);
        } finally {
          await fleet.stopAll();
        }
      }, 120_000);

      it("a lost volume is not a new stack: with restore.from still set, a member whose peers already formed the cluster starts empty; before that, it restores", async () => {
        const fleet = new LocalFleet();
        try {
          const nodes = await members(fleet, [0, 1, 2], backup.uri);
          const peers = nodes.map((n) => n.address);
          // Peers restored but not yet met (a new stack, before the bootstrap): it restores.
          const [early] = await members(fleet, [0], backup.uri, plannedRanges(3), { prefix: "early", peers });
          expect(Number(await call(early!, "DBSIZE"))).toBe(backup.manifest.shards[0]?.keys);
          await early!.stop();
          await restoreCluster({
            shards: backup.manifest.shards.map((x) => ({ ranges: x.slots, keys: x.keys })),
            restored: peers,
            members: nodes.map((n, i) => localMember(n, ["a", "b", "c"][i] as string)),
            replicasPerPrimary: 0,
            connector: new DirectConnector({ password: PW }),
          });
          // The same member once they formed the cluster (its volume lost later on): nothing placed.
          const [late] = await members(fleet, [0], backup.uri, plannedRanges(3), { prefix: "late", peers });
          expect(Number(await call(late!, "DBSIZE"))).toBe(0);
          expect(existsSync(join(late!.dir, "restored-from"))).toBe(false);
          // Its report (the pod's termination message) says so, for the RestoreCheck.
          const said = parseRestoreMessage(readFileSync(restoreMessageFile(late!.dir), "utf8"), "late-0");
          expect(said.restore === "none" ? said.reason : said).toMatch(
            /^not restoring: the release is already formed \(.* knows 3 cluster nodes\)/,
          );
          // A peer refusing the password: the peers' state is unknown, so the start fails rather than guess.
          await expect(
            fleet.start({
              name: "wrong-password",
              clusterEnabled: true,
              startTimeoutMs: 30_000,
              launch: restoredMemberLaunch({
                restore: { mode: "cluster", plannedSlots: plannedRanges(3) },
                from: backup.uri,
                shard: 0,
                s3,
                server: { clusterEnabled: true, password: "not-the-password", appendonly: true },
                binDir: join(tmp, "bin"),
                peers,
              }),
            }),
          ).rejects.toThrow(
            /cannot tell whether the release is already formed \(.* answered: (WRONGPASS|AUTH failed|ERR)/,
          );
        } finally {
          await fleet.stopAll();
        }
      }, 120_000);

      it.each([
        [
          "a corrupted object",
          "corrupt",
          /restore\.sh: error: shard 1: checksum mismatch: .*shard-1\.rdb has sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}/,
        ],
        [
          "a missing object",
          "missing",
          /restore\.sh: error: shard 1: cannot fetch .*shard-1\.rdb \(missing object\?\)/,
        ],
        ["a missing manifest", "nomanifest", /restore\.sh: error: cannot fetch the backup manifest .*manifest\.json/],
      ])(
        "%s fails the member's start with a clear error; it never serves",
        async (_what, how, message) => {
          const uri = await copyBackup(backup.uri, how);
          if (how === "corrupt") {
            const f = join(tmp, "corrupt.rdb");
            await aws("s3", "cp", "--only-show-errors", `${uri}/shard-1.rdb`, f);
            const bytes = readFileSync(f);
            const at = Math.floor(bytes.length / 2);
            bytes[at] = (bytes[at] as number) ^ 0xff;
            writeFileSync(f, bytes);
            await aws("s3", "cp", "--only-show-errors", f, `${uri}/shard-1.rdb`);
          } else if (how === "missing") await aws("s3", "rm", "--only-show-errors", `${uri}/shard-1.rdb`);
          else await aws("s3", "rm", "--only-show-errors", `${uri}/manifest.json`);
          const fleet = new LocalFleet();
          try {
            await expect(members(fleet, [1], uri)).rejects.toThrow(message);
            expect(fleet.servers).toEqual([]);
          } finally {
            await fleet.stopAll();
          }
        },
        60_000,
      );

      it("refuses a cluster of another shape, naming both slot ranges", async () => {
        const fleet = new LocalFleet();
        try {
          await expect(members(fleet, [1], backup.uri, plannedRanges(4))).rejects.toThrow(
            /the backup has 3 shard\(s\), the new cluster topology plans 4/,
          );
          const shifted = [["0-5460"], ["5461-10920"], ["10921-16383"]];
          await expect(members(fleet, [1], backup.uri, shifted)).rejects.toThrow(
            /shard 1: the snapshot holds slots '5461-10921', the new topology plans '5461-10920' for it: refusing/,
          );
          expect(fleet.servers).toEqual([]);
        } finally {
          await fleet.stopAll();
        }
      }, 60_000);
    });

    it("replication mode, 1 + 1: backs up from the replica and restores both members, every key back; a peer replica never linked does not stop a restore, one that was linked does", async () => {
      const fleet = new LocalFleet();
      let backup: LocalBackupResult;
      try {
        const r = await startLocalReplication(fleet, {
          replicas: 1,
          zones: ["a", "b"],
          password: PW,
          server: { appendonly: false },
        });
        for (let i = 0; i < 500; i++) await call(r.primary, "SET", `r:${i}`, `v${i}`);
        await call(r.primary, "WAIT", "1", "5000");
        const report = await verifyTopology({
          mode: "replication",
          seeds: [{ host: r.primary.host, port: r.primary.port }],
          connector: new DirectConnector({ password: PW }),
        });
        const plan = planBackup(report);
        expect(plan.targets[0]).toMatchObject({
          host: r.replicas[0]!.host,
          port: r.replicas[0]!.port,
          source: "replica",
          slots: [],
        });
        // The CronJob's path: backup.sh plans from a seed (here the replica: it follows it to the primary).
        const seed = { mode: "replication" as const, host: r.replicas[0]!.host, port: r.replicas[0]!.port };
        backup = await runLocalBackup({
          seed,
          dir: join(tmp, "repl-backup"),
          uri: `s3://${BUCKET}/repl`,
          s3,
          password: PW,
        });
        expect(backup.stderr).toContain(`plan: 0/${r.replicas[0]!.host}/${r.replicas[0]!.port}/`);
        // With the replica gone: refused, naming the shard, unless the primary is allowed.
        await r.replicas[0]!.stop();
        const planOpts = {
          dir: join(tmp, "repl-plan"),
          mode: "replication" as const,
          host: r.primary.host,
          port: r.primary.port,
          s3,
          password: PW,
        };
        await expect(planWithScript(planOpts)).rejects.toThrow(
          /shard 0 \(primary [0-9.:]+\): no replica with its link up; set BACKUP_ALLOW_PRIMARY=1/,
        );
        expect(await planWithScript({ ...planOpts, allowPrimary: true })).toEqual([
          `0/${r.primary.host}/${r.primary.port}/`,
        ]);
      } finally {
        await fleet.stopAll();
      }
      expect(backup.manifest.shards[0]?.keys).toBe(500);
      const fleet2 = new LocalFleet();
      try {
        const { primary, replica } = await startRestoredReplication(fleet2, {
          from: backup.uri,
          s3,
          binDir: join(tmp, "bin"),
          password: PW,
          prefix: "r",
        });
        expect(Number(await call(primary, "DBSIZE"))).toBe(backup.manifest.shards[0]?.keys);
        expect(Number(await call(replica, "DBSIZE"))).toBe(500);
        for (let i = 0; i < 500; i += 37) expect(await call(replica, "GET", `r:${i}`)).toBe(`v${i}`);
        // Ordinal 0's restore-place on loaded nodes can run after its peers already started as its
        // replicas (the Sentinels name it from their first start): a replica never linked since it
        // started is no formed release, so it restores (on real pods in CI it placed nothing: DBSIZE 0 of 3000).
        const member = (name: string, peers: string[], replicaOf?: { host: string; port: number }) =>
          fleet2.start({
            name,
            launch: restoredMemberLaunch({
              restore: { mode: "replication" },
              from: backup.uri,
              shard: 0,
              s3,
              server: { password: PW, appendonly: false, replicaOf },
              binDir: join(tmp, "bin"),
              peers,
            }),
          });
        const waiting = await member("r-waiting", [], { host: "127.0.0.1", port: 1 });
        const late0 = await member("r-late0", [waiting.address]);
        expect(Number(await call(late0, "DBSIZE"))).toBe(500);
        // A replica that was linked, its primary gone since (a lost volume): formed, nothing placed.
        await primary.stop();
        const lost = await member("r-lost", [replica.address]);
        expect(Number(await call(lost, "DBSIZE"))).toBe(0);
        const said = parseRestoreMessage(readFileSync(restoreMessageFile(lost.dir), "utf8"), "r-lost");
        expect(said.restore === "none" ? said.reason : said).toMatch(
          /^not restoring: the release is already formed \(.* is a replica whose link to its primary is down for \d+s\)/,
        );
      } finally {
        await fleet2.stopAll();
      }
    }, 120_000);
  },
);
