/**
 * The pure half of backup and restore: the manifest's parser (errors name the field), the backup
 * plan (a linked replica with the least lag per shard, in slot order) and the restore checks
 * (slot ranges against the plan, missing object, checksum) and, after a restore, each shard's
 * manifest counts against DBSIZE on the primary now serving its slots.
 */
import { describe, expect, it } from "vitest";
import { parseManifest, type BackupManifest } from "../../pod/backup-manifest.js";
import { planBackup, targetArg } from "../../core/backup/backup-plan.js";
import {
  checkRestoredKeyCounts,
  checkRestoreShape,
  checkShardObject,
  plannedRanges,
} from "../../core/backup/restore-check.js";
import type { ShardReport, TopologyReport } from "../../core/verify/verify-types.js";

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
    expect(() =>
      parseManifest(manifestText("cluster", [shardLine(1, ["0-16383"]).replace("shard-1", "shard-1")])),
    ).toThrow(/shards\.0\.shard: shards must be listed in order/);
    expect(() => parseManifest(manifestText("replication", [shardLine(0, ["0-16383"])]))).toThrow(
      /shards\.0\.slots: replication mode has no slots/,
    );
    expect(() => parseManifest(manifestText("cluster", [shardLine(0, ["0-16383"])]).replace("/v1", "/v9"))).toThrow(
      /format/,
    );
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
    expect(() => planBackup(r)).toThrow(
      /no replica to snapshot for shard 0 \(primary 10\.0\.0\.1:6379\): none of its 1 replica\(s\) has its link up/,
    );
    const plan = planBackup(r, { allowPrimary: true });
    expect(plan.targets[0]).toMatchObject({ host: "10.0.0.1", port: 6379, source: "primary", slots: [] });
    expect(plan.notes[0]).toMatch(/snapshotting its primary/);
  });
});

describe("restore checks", () => {
  it("accepts the same shape and refuses other ranges, naming both", () => {
    const m = cluster3();
    expect(() => checkRestoreShape(m, "cluster", plannedRanges(3))).not.toThrow();
    expect(() =>
      checkRestoreShape(m, "cluster", [["0-5460"], ["5461-10000", "10001-10921"], ["10922-16383"]]),
    ).not.toThrow();
    expect(() => checkRestoreShape(m, "cluster", [["0-5460"], ["5461-10920"], ["10921-16383"]])).toThrow(
      /shard 1: snapshot 5461-10921, planned 5461-10920; shard 2: snapshot 10922-16383, planned 10921-16383/,
    );
    expect(() => checkRestoreShape(m, "cluster", plannedRanges(4))).toThrow(
      /has 3 shard\(s\), the new cluster topology plans 4/,
    );
    expect(() => checkRestoreShape(m, "replication", [[]])).toThrow(
      /is of a cluster topology; the new stack is in replication mode/,
    );
  });

  it("refuses a missing object and a checksum mismatch", () => {
    const e = cluster3().shards[1]!;
    expect(() => checkShardObject(e, undefined, "s3://b/p/id")).toThrow(
      /shard 1: s3:\/\/b\/p\/id\/shard-1\.rdb is missing/,
    );
    expect(() => checkShardObject(e, { bytes: 100, sha256: "b".repeat(64) }, "s3://b/p/id")).toThrow(
      /shard 1: checksum mismatch/,
    );
    expect(() => checkShardObject(e, { bytes: 100, sha256: SUM }, "s3://b/p/id")).not.toThrow();
  });
});

describe("checkRestoredKeyCounts", () => {
  // Shards 0..2 hold 10, 11, 12 keys; shard 1 has 3 keys with a TTL.
  const entries = () => cluster3().shards.map((e) => (e.shard === 1 ? { ...e, expires: 3 } : e));
  const primary = (name: string, slotRanges: string[], keys: number | undefined) => ({ name, slotRanges, keys });

  it("maps each shard to the primary serving its slots, wherever it moved, and passes equal counts", () => {
    // A failover moved shard 0 to vc-4; the verifier lists primaries in its own order, ranges split.
    const primaries = [
      primary("vc-2", ["10922-16383"], 12),
      primary("vc-4", ["0-100", "101-5460"], 10),
      primary("vc-1", ["5461-10921"], 11),
    ];
    expect(checkRestoredKeyCounts("cluster", entries().reverse(), primaries)).toEqual({
      shards: [
        { shard: 0, slots: ["0-5460"], manifestKeys: 10, expires: 0, keys: 10, primary: "vc-4" },
        { shard: 1, slots: ["5461-10921"], manifestKeys: 11, expires: 3, keys: 11, primary: "vc-1" },
        { shard: 2, slots: ["10922-16383"], manifestKeys: 12, expires: 0, keys: 12, primary: "vc-2" },
      ],
      problems: [],
    });
  });

  it("accepts keys - expires ≤ DBSIZE ≤ keys, and names shard, manifest count, DBSIZE and primary outside it", () => {
    const at = (k1: number | undefined, k0 = 10) => [
      primary("vc-0", ["0-5460"], k0),
      primary("vc-1", ["5461-10921"], k1),
      primary("vc-2", ["10922-16383"], 12),
    ];
    expect(checkRestoredKeyCounts("cluster", entries(), at(8)).problems).toEqual([]);
    expect(checkRestoredKeyCounts("cluster", entries(), at(7)).problems).toEqual([
      "shard 1 (slots 5461-10921): DBSIZE 7 on its primary vc-1, the manifest 11 keys (3 with a TTL, which may have expired since the snapshot: 8 to 11 accepted): 1 missing",
    ]);
    expect(checkRestoredKeyCounts("cluster", entries(), at(12, 9)).problems).toEqual([
      "shard 0 (slots 0-5460): DBSIZE 9 on its primary vc-0, the manifest 10 keys: 1 missing",
      "shard 1 (slots 5461-10921): DBSIZE 12 on its primary vc-1, the manifest 11 keys (3 with a TTL, which may have expired since the snapshot: 8 to 11 accepted): 1 more than the snapshot held (written since the restore?)",
    ]);
    expect(checkRestoredKeyCounts("cluster", entries(), at(undefined)).problems).toEqual([
      "shard 1 (slots 5461-10921): DBSIZE on its primary vc-1 is unknown (not reachable?); the manifest counts 11 keys",
    ]);
  });

  it("names a shard no primary serves exactly, a shard nobody reported, and slots no restored shard held", () => {
    const moved = [
      primary("vc-0", ["0-5460"], 10),
      primary("vc-1", ["5461-10920"], 11),
      primary("vc-2", ["10921-16383"], 12),
    ];
    expect(checkRestoredKeyCounts("cluster", entries(), moved).problems).toEqual([
      "shard 1 (slots 5461-10921): no primary serves exactly these slots (primaries: vc-0 0-5460; vc-1 5461-10920; vc-2 10921-16383)",
      "shard 2 (slots 10922-16383): no primary serves exactly these slots (primaries: vc-0 0-5460; vc-1 5461-10920; vc-2 10921-16383)",
      "primary vc-1 serves slots 5461-10920, which no restored shard held",
      "primary vc-2 serves slots 10921-16383, which no restored shard held",
    ]);
    const [e0, , e2] = entries();
    const all = [
      primary("vc-0", ["0-5460"], 10),
      primary("vc-1", ["5461-10921"], 11),
      primary("vc-2", ["10922-16383"], 12),
    ];
    expect(checkRestoredKeyCounts("cluster", [e0!, e2!], all).problems).toEqual([
      "shard 1: no member reported restoring it",
      "primary vc-1 serves slots 5461-10921, which no restored shard held",
    ]);
  });

  it("replication mode: the one primary, whatever its name", () => {
    const e = { ...cluster3().shards[0]!, slots: [] };
    expect(checkRestoredKeyCounts("replication", [e], [primary("valkey-2", [], 10)])).toEqual({
      shards: [{ shard: 0, slots: [], manifestKeys: 10, expires: 0, keys: 10, primary: "valkey-2" }],
      problems: [],
    });
    expect(checkRestoredKeyCounts("replication", [e], [primary("valkey-2", [], 4)]).problems).toEqual([
      "shard 0: DBSIZE 4 on its primary valkey-2, the manifest 10 keys: 6 missing",
    ]);
    expect(checkRestoredKeyCounts("replication", [e], []).problems).toEqual([
      "replication mode: the verifier found 0 primaries (none), not one",
    ]);
  });
});
