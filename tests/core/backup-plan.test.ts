/**
 * The pure half of backup and restore: the manifest's parser (errors name the field), the backup
 * plan (a linked replica with the least lag per shard, in slot order) and the restore checks
 * (slot ranges against the plan, missing object, checksum, key counts).
 */
import { describe, expect, it } from "vitest";
import { parseManifest, type BackupManifest } from "../../pod/backup-manifest.js";
import { planBackup, targetArg } from "../../benchmarks/backup/backup-plan.js";
import { checkRestoreShape, checkShardObject, compareKeyCounts, plannedRanges } from "../../benchmarks/backup/restore-check.js";
import type { ShardReport, TopologyReport } from "../../benchmarks/verify/verify-types.js";

const SUM = "a".repeat(64);

function shardLine(shard: number, slots: string[], keys = 10): string {
  return JSON.stringify({
    shard,
    member: `10.0.0.${shard + 1}:6379`,
    slots,
    object: `shard-${shard}.rdb`,
    bytes: 100,
    sha256: SUM,
    keys,
    expires: 0,
    offset: 5,
    version: "9.1.2",
  });
}

function manifestText(mode: "cluster" | "replication", lines: string[]): string {
  return `{"format":"valkey-on-eks/backup/v1","id":"20261125T061200Z","createdAt":"2026-11-25T06:12:00Z","mode":"${mode}","shards":[\n${lines.join(",\n")}\n]}\n`;
}

const cluster3 = (): BackupManifest =>
  parseManifest(
    manifestText(
      "cluster",
      plannedRanges(3).map((r, i) => shardLine(i, r, 10 + i)),
    ),
  );

describe("parseManifest", () => {
  it("accepts the layout backup.sh writes", () => {
    const m = cluster3();
    expect(m.shards.map((s) => s.slots)).toEqual([["0-5460"], ["5461-10921"], ["10922-16383"]]);
    expect(m.shards[2]?.keys).toBe(12);
  });

  it("names the bad field", () => {
    const bad = manifestText("cluster", [shardLine(0, ["0-16383"]).replace(SUM, "xyz")]);
    expect(() => parseManifest(bad, "s3://b/p/manifest.json")).toThrow(
      /s3:\/\/b\/p\/manifest\.json: invalid backup manifest: shards\.0\.sha256: 64 lowercase hex digits/,
    );
    const noKeys = manifestText("cluster", [shardLine(0, ["0-16383"]).replace(/"keys":10,/, "")]);
    expect(() => parseManifest(noKeys)).toThrow(/shards\.0\.keys/);
    expect(() => parseManifest("{not json")).toThrow(/manifest\.json: not JSON/);
  });

  it("refuses shards out of order, slots in replication mode, a wrong format", () => {
    expect(() => parseManifest(manifestText("cluster", [shardLine(1, ["0-16383"]).replace("shard-1", "shard-1")]))).toThrow(
      /shards\.0\.shard: shards must be listed in order/,
    );
    expect(() => parseManifest(manifestText("replication", [shardLine(0, ["0-16383"])]))).toThrow(/shards\.0\.slots: replication mode has no slots/);
    expect(() => parseManifest(manifestText("cluster", [shardLine(0, ["0-16383"])]).replace("/v1", "/v9"))).toThrow(/format/);
  });
});

function shard(primary: string, slots: string[], replicas: Partial<ShardReport["replicas"][number]>[]): ShardReport {
  return {
    primary: { address: primary, zone: "a", slotRanges: slots, slotCount: 0, keys: undefined },
    replicas: replicas.map((r, i) => ({ address: `10.1.0.${i}:6379`, zone: "b", crossAz: true, linkUp: true, ...r })),
  };
}

function report(mode: "cluster" | "replication", shards: ShardReport[]): TopologyReport {
  return { ok: true, mode, failures: [], shards, primariesPerZone: {}, nodeCount: 0 };
}

describe("planBackup", () => {
  it("takes, per shard in slot order, the linked replica with the least lag", () => {
    const plan = planBackup(
      report("cluster", [
        shard("10.0.0.2:6379", ["5461-16383"], [{ address: "10.2.0.1:6379", lagBytes: 5 }]),
        shard(
          "10.0.0.1:6379",
          ["0-5460"],
          [
            { address: "10.1.0.1:6379", lagBytes: 900 },
            { address: "10.1.0.2:6379", linkUp: false, lagBytes: 0 },
            { address: "10.1.0.3:6379", lagBytes: 10 },
            { address: "10.1.0.4:6379" },
          ],
        ),
      ]),
    );
    expect(plan.targets.map(targetArg)).toEqual(["0/10.1.0.3/6379/0-5460", "1/10.2.0.1/6379/5461-16383"]);
    expect(plan.targets.every((t) => t.source === "replica")).toBe(true);
  });

  it("refuses a shard with no linked replica unless the primary is allowed, and says so", () => {
    const r = report("replication", [shard("10.0.0.1:6379", [], [{ linkUp: false }])]);
    expect(() => planBackup(r)).toThrow(/no replica to snapshot for shard 0 \(primary 10\.0\.0\.1:6379\): none of its 1 replica\(s\) has its link up/);
    const plan = planBackup(r, { allowPrimary: true });
    expect(plan.targets[0]).toMatchObject({ host: "10.0.0.1", port: 6379, source: "primary", slots: [] });
    expect(plan.notes[0]).toMatch(/snapshotting its primary/);
  });
});

describe("restore checks", () => {
  it("accepts the same shape and refuses other ranges, naming both", () => {
    const m = cluster3();
    expect(() => checkRestoreShape(m, "cluster", plannedRanges(3))).not.toThrow();
    expect(() => checkRestoreShape(m, "cluster", [["0-5460"], ["5461-10000", "10001-10921"], ["10922-16383"]])).not.toThrow();
    expect(() => checkRestoreShape(m, "cluster", [["0-5460"], ["5461-10920"], ["10921-16383"]])).toThrow(
      /shard 1: snapshot 5461-10921, planned 5461-10920; shard 2: snapshot 10922-16383, planned 10921-16383/,
    );
    expect(() => checkRestoreShape(m, "cluster", plannedRanges(4))).toThrow(/has 3 shard\(s\), the new cluster topology plans 4/);
    expect(() => checkRestoreShape(m, "replication", [[]])).toThrow(/is of a cluster topology; the new stack is in replication mode/);
  });

  it("refuses a missing object and a checksum mismatch", () => {
    const e = cluster3().shards[1]!;
    expect(() => checkShardObject(e, undefined, "s3://b/p/id")).toThrow(/shard 1: s3:\/\/b\/p\/id\/shard-1\.rdb is missing/);
    expect(() => checkShardObject(e, { bytes: 100, sha256: "b".repeat(64) }, "s3://b/p/id")).toThrow(/shard 1: checksum mismatch/);
    expect(() => checkShardObject(e, { bytes: 100, sha256: SUM }, "s3://b/p/id")).not.toThrow();
  });

  it("compares key counts per shard", () => {
    expect(compareKeyCounts(cluster3(), [10, 11, 12])).toEqual([]);
    expect(compareKeyCounts(cluster3(), [10, 9, undefined])).toEqual([
      { shard: 1, expected: 11, actual: 9 },
      { shard: 2, expected: 12, actual: undefined },
    ]);
  });
});
