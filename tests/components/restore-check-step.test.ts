/**
 * The RestoreCheck step (components/steps/restore-check/) on REAL valkey-server processes restored
 * by the script the pods run (restore.sh, through moto as the S3 server), seen through a static
 * pod API whose pods carry what each member's place step wrote to its termination message file
 * (restoreMessageFile: in a pod, the kubelet's /dev/termination-log, copied into the pod status):
 *
 * - restore.sh place writes one JSON line: the shard's manifest entry and the backup id when it
 *   placed one, the reason when it placed nothing (a member that starts empty);
 * - a restored 3 x 1 cluster (formed by the ClusterBootstrap step, restored: true) passes, the
 *   report giving each shard's manifest count, DBSIZE and primary pod;
 * - a key deleted from shard 1 fails it, naming the shard, the manifest's count, DBSIZE and the pod;
 * - a `restore.from` no member restored fails it, naming what every member said;
 * - replication 1 + 1 with keys with a TTL passes, also with some of them gone (as if expired),
 *   and fails once more are gone than have a TTL;
 * - only `from` re-runs it, and its outputs never carry the password.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planBackup } from "../../core/backup/backup-plan.js";
import {
  restoredMemberLaunch,
  restoreMessageFile,
  runLocalBackup,
  startRestoredReplication,
  type LocalBackupResult,
  type S3Env,
} from "../../harness/backup/local-backup.js";
import { plannedRanges } from "../../core/backup/restore-check.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { startLocalReplication } from "../../harness/local/local-replication.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";
import { bootstrapStep } from "../../components/steps/cluster-bootstrap/declaration.js";
import { bootstrapOnKubernetes } from "../../components/steps/cluster-bootstrap/implementation.js";
import { restoreCheckStep } from "../../components/steps/restore-check/declaration.js";
import { checkRestore, create, diff } from "../../components/steps/restore-check/implementation.js";
import type { CheckDeps } from "../../components/steps/topology-check/implementation.js";
import { parseRestoreMessage } from "../../pod/restore-message.js";
import { motoBucket, s3ToolsMissing, type MotoServer } from "../support/moto-server.js";
import { callOn } from "../support/processes.js";

const missing = s3ToolsMissing();
const PW = `restore-check-${Math.random().toString(36).slice(2)}`;
const BUCKET = "restore-check";
const ZONES = { "node-a": "us-west-2a", "node-b": "us-west-2b", "node-c": "us-west-2c" };
const SELECTOR = "app.kubernetes.io/instance=vc";

let moto: MotoServer;
let s3: S3Env;
let tmp: string;

beforeAll(async () => {
  if (missing !== undefined) return;
  tmp = mkdtempSync(join(tmpdir(), "restore-check-test-"));
  ({ moto, s3 } = await motoBucket("127.0.0.3", BUCKET, join(tmp, "bin")));
}, 60_000);
afterAll(async () => {
  await moto?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/**
 * Restored members seen as pods vc-0.., each carrying its place step's report as restore-place's termination message.
 */
function asPods(nodes: readonly ValkeyProcess[]): { api: StaticPodApi; deps: CheckDeps } {
  const api = new StaticPodApi(
    nodes.map((n, i) => ({
      name: `vc-${i}`,
      podIP: n.host,
      nodeName: Object.keys(ZONES)[i % 3] as string,
      labels: { "app.kubernetes.io/instance": "vc" },
      ports: { valkey: n.port, ...(n.clusterPort === undefined ? {} : { "cluster-bus": n.clusterPort }) },
      initMessages: { "restore-place": [readFileSync(restoreMessageFile(n.dir), "utf8").trim()] },
    })),
    ZONES,
  );
  return { api, deps: { podApi: api, connector: () => new DirectConnector({ password: PW }) } };
}

const raw = (mode: "cluster" | "replication", from: string) => ({
  namespace: "data",
  selector: SELECTOR,
  kubeconfig: "unused",
  connector: "direct",
  password: PW,
  mode,
  from,
});

const call = (n: ValkeyProcess, ...args: string[]): Promise<string> =>
  callOn(n, PW, args[0] as string, ...args.slice(1));

describe.skipIf(missing !== undefined)(
  `RestoreCheck on restored real servers${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    describe("cluster mode, 3 x 1", () => {
      let backup: LocalBackupResult;
      const fleet = new LocalFleet();
      let nodes: ValkeyProcess[] = [];
      let deps: CheckDeps;

      beforeAll(async () => {
        const source = new LocalFleet();
        try {
          const c = await startLocalCluster(source, {
            primaries: 3,
            replicasPerPrimary: 1,
            zones: ["a", "b", "c"],
            password: PW,
            clusterNodeTimeoutMs: 2000,
          });
          const client = new Cluster([{ host: c.seed.host, port: c.seed.port }], { redisOptions: { password: PW } });
          try {
            for (let i = 0; i < 600; i++) await client.set(`k:${i}`, `v${i}`);
          } finally {
            client.disconnect();
          }
          for (const p of c.primaries) await call(p, "WAIT", "1", "5000");
          const report = await verifyTopology({
            mode: "cluster",
            seeds: [{ host: c.seed.host, port: c.seed.port }],
            connector: new DirectConnector({ password: PW }),
          });
          backup = await runLocalBackup({
            plan: planBackup(report),
            dir: join(tmp, "cluster"),
            uri: `s3://${BUCKET}/prod`,
            id: "check-1",
            s3,
            password: PW,
          });
        } finally {
          await source.stopAll();
        }
        // A new stack: pods 0..2 restore shards 0..2, pods 3..5 start empty; the ClusterBootstrap (restored: true)
        // forms it.
        nodes = await fleet.startMany(6, (i) => ({
          name: `restored-${i}`,
          clusterEnabled: true,
          startTimeoutMs: 30_000,
          launch: restoredMemberLaunch({
            restore: { mode: "cluster", plannedSlots: plannedRanges(3) },
            from: backup.uri,
            shard: i < 3 ? i : "none",
            s3,
            server: { clusterEnabled: true, clusterNodeTimeoutMs: 2000, password: PW, appendonly: true },
            binDir: join(tmp, "bin"),
          }),
        }));
        ({ deps } = asPods(nodes));
        const target = {
          namespace: "data",
          selector: SELECTOR,
          kubeconfig: "unused",
          connector: "direct",
          password: PW,
        };
        const inputs = bootstrapStep.parse({
          ...target,
          expectedPods: 6,
          primaries: 3,
          replicasPerPrimary: 1,
          restored: true,
        });
        const out = await bootstrapOnKubernetes({ ...inputs, timeoutMs: 30_000 }, deps);
        expect(out.plan.shards.map((s) => s.primary.pod)).toEqual(["vc-0", "vc-1", "vc-2"]);
      }, 180_000);
      afterAll(async () => fleet.stopAll());

      it("restore.sh place reports the shard it placed (its manifest entry, the backup id) or why it placed nothing", () => {
        const report = (i: number) => JSON.parse(readFileSync(restoreMessageFile(nodes[i]!.dir), "utf8")) as unknown;
        expect(report(1)).toEqual({
          restore: "placed",
          from: backup.uri,
          backup: "check-1",
          entry: backup.manifest.shards[1],
        });
        const empty = parseRestoreMessage(JSON.stringify(report(4)), "vc-4");
        expect(empty.restore === "none" ? [empty.from, empty.reason] : empty).toEqual([
          backup.uri,
          expect.stringMatching(/^this member starts empty: it joins as a replica/) as string,
        ]);
        // One line each, and the shape the step parses.
        for (const n of nodes)
          expect(readFileSync(restoreMessageFile(n.dir), "utf8").trim().split("\n")).toHaveLength(1);
        for (const i of [1, 4]) expect(() => parseRestoreMessage(JSON.stringify(report(i)), `vc-${i}`)).not.toThrow();
      });

      it("passes: each shard's DBSIZE on the primary serving its slots equals the manifest's; the report names the pods", async () => {
        const t0 = Date.now();
        const out = await checkRestore(restoreCheckStep.parse(raw("cluster", backup.uri)), deps);
        console.log(
          `[restore check] 6 pods, 3 shards, ${backup.manifest.shards.reduce((a, x) => a + x.keys, 0)} keys: ${Date.now() - t0} ms`,
        );
        expect(out.report).toEqual({
          from: backup.uri,
          backup: "check-1",
          shards: backup.manifest.shards.map((s) => ({
            shard: s.shard,
            slots: s.slots,
            manifestKeys: s.keys,
            expires: 0,
            keys: s.keys,
            primary: `vc-${s.shard}`,
          })),
        });
        expect(out.report.shards.reduce((a, s) => a + s.keys, 0)).toBe(600);
        // Through the provider protocol: the outputs carry the report, never the password.
        const created = await create(raw("cluster", `${backup.uri}/`), deps);
        expect(created.outs.report).toMatchObject({ backup: "check-1" });
        expect(JSON.stringify(created.outs)).not.toContain(PW);
      });

      it("refuses a restore.from no member restored, naming what each member said", async () => {
        const other = `s3://${BUCKET}/prod/other`;
        await expect(checkRestore(restoreCheckStep.parse(raw("cluster", other)), deps)).rejects.toThrow(
          new RegExp(
            `restore\\.from is ${other}, but no member restored it .*vc-0: placed shard 0 of another backup \\(${backup.uri}\\).*vc-3: placed nothing: this member starts empty`,
          ),
        );
      });

      it("only restore.from re-runs it", () => {
        const olds = { ...raw("cluster", backup.uri), report: {} };
        expect(
          diff("id", olds, {
            ...raw("cluster", backup.uri),
            namespace: "elsewhere",
            connector: "port-forward",
            mode: "replication",
          }).changes,
        ).toBe(false);
        expect(diff("id", olds, raw("cluster", `${backup.uri}-2`)).changes).toBe(true);
      });

      // Last: it changes the data.
      it("fails when a shard lost a key, naming the shard, the manifest's count, DBSIZE and its primary", async () => {
        const key = await call(nodes[1]!, "RANDOMKEY");
        expect(await call(nodes[1]!, "DEL", key)).toBe("1");
        const want = backup.manifest.shards[1]!.keys;
        await expect(checkRestore(restoreCheckStep.parse(raw("cluster", backup.uri)), deps)).rejects.toThrow(
          `restore check of backup check-1 (${backup.uri}) failed:\n  shard 1 (slots 5461-10921): DBSIZE ${want - 1} on its primary vc-1, the manifest ${want} keys: 1 missing`,
        );
      });
    });

    it("replication mode, 1 + 1: passes with keys with a TTL gone (as if expired), fails once more keys are gone than had one", async () => {
      const fleet = new LocalFleet();
      let backup: LocalBackupResult;
      try {
        const r = await startLocalReplication(fleet, {
          replicas: 1,
          zones: ["a", "b"],
          password: PW,
          server: { appendonly: false },
        });
        for (let i = 0; i < 200; i++)
          await call(r.primary, "SET", `r:${i}`, `v${i}`, ...(i < 20 ? ["EX", "3600"] : []));
        await call(r.primary, "WAIT", "1", "5000");
        const seed = { mode: "replication" as const, host: r.primary.host, port: r.primary.port };
        backup = await runLocalBackup({
          seed,
          dir: join(tmp, "repl"),
          uri: `s3://${BUCKET}/repl`,
          id: "repl-1",
          s3,
          password: PW,
        });
      } finally {
        await fleet.stopAll();
      }
      expect(backup.manifest.shards[0]).toMatchObject({ keys: 200, expires: 20 });
      const restored = new LocalFleet();
      try {
        const { primary, replica } = await startRestoredReplication(restored, {
          from: backup.uri,
          s3,
          binDir: join(tmp, "bin"),
          password: PW,
          prefix: "r",
        });
        const { deps } = asPods([primary, replica]);
        const inputs = restoreCheckStep.parse(raw("replication", backup.uri));
        const row = (keys: number) => ({
          from: backup.uri,
          backup: "repl-1",
          shards: [{ shard: 0, slots: [], manifestKeys: 200, expires: 20, keys, primary: "vc-0" }],
        });
        expect((await checkRestore(inputs, deps)).report).toEqual(row(200));
        // 20 keys had a TTL: up to 20 may be gone by the check.
        for (let i = 0; i < 15; i++) await call(primary, "DEL", `r:${i}`);
        expect((await checkRestore(inputs, deps)).report).toEqual(row(185));
        for (let i = 15; i < 21; i++) await call(primary, "DEL", `r:${i}`);
        await expect(checkRestore(inputs, deps)).rejects.toThrow(
          "shard 0: DBSIZE 179 on its primary vc-0, the manifest 200 keys (20 with a TTL, which may have expired since the snapshot: 180 to 200 accepted): 1 missing",
        );
      } finally {
        await restored.stopAll();
      }
    }, 120_000);
  },
);
