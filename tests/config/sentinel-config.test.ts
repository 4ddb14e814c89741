import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { configIssues as issuesOf } from "../support/stack-config.js";

const repl = (replication: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  valkey: { mode: "replication", replication },
  ...extra,
});

describe("valkey.replication.sentinel and minReplicasMaxLag", () => {
  it("defaults: 3 Sentinels, quorum 2, the documented timings, every replica re-pointed at once; fenced: min-replicas-to-write 1, max lag 3 s (+ 2 s within down-after)", () => {
    const { config } = parseStackConfig({});
    expect(config.valkey.replication.sentinel).toEqual({
      replicas: 3,
      quorum: 2,
      downAfterMilliseconds: 5000,
      failoverTimeoutMs: 60000,
      parallelSyncs: 3,
    });
    expect(parseStackConfig(repl({ replicas: 2 })).config.valkey.replication.sentinel.parallelSyncs).toBe(2);
    expect(config.valkey.replication.minReplicasToWrite).toBe(1);
    expect(config.valkey.replication.minReplicasMaxLag).toBe(3);
    expect((config.valkey.replication.minReplicasMaxLag + 2) * 1000).toBeLessThanOrEqual(
      config.valkey.replication.sentinel.downAfterMilliseconds,
    );
  });

  it("fencing off (minReplicasToWrite 0) takes any max lag; a replica-less set must turn it off, named", () => {
    expect(issuesOf(repl({ minReplicasToWrite: 0, minReplicasMaxLag: 10 }))).toEqual([]);
    // Unfenced, one replica at a time is the user's trade: the new primary takes writes without replicas.
    expect(issuesOf(repl({ minReplicasToWrite: 0, sentinel: { parallelSyncs: 1 } }))).toEqual([]);
    expect(issuesOf(repl({ replicas: 0 }, { checks: { verify: false } })).map((i) => i.path)).toEqual([
      "valkey.replication.minReplicasToWrite",
    ]);
  });

  it("accepts 5 Sentinels with quorum 3 over 5 zones", () => {
    expect(
      issuesOf(
        repl(
          { sentinel: { replicas: 5, quorum: 3 } },
          { aws: { zones: ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d", "us-west-2e"] } },
        ),
      ),
    ).toEqual([]);
  });

  // [description, raw, exact key path, message fragment]
  const BAD: Array<[string, Record<string, unknown>, string, string]> = [
    [
      "quorum above the Sentinels",
      repl({ sentinel: { quorum: 4 } }),
      "valkey.replication.sentinel.quorum",
      "≤ valkey.replication.sentinel.replicas (3)",
    ],
    [
      "quorum not a majority",
      repl({ sentinel: { replicas: 3, quorum: 1 } }),
      "valkey.replication.sentinel.quorum",
      "majority of the 3 Sentinels (≥ 2)",
    ],
    [
      "two Sentinels",
      repl({ sentinel: { replicas: 2, quorum: 2 } }),
      "valkey.replication.sentinel.replicas",
      "must be ≥ 3",
    ],
    [
      "more Sentinels than zones",
      repl({ sentinel: { replicas: 5, quorum: 3 } }),
      "valkey.replication.sentinel.replicas",
      "one per zone over the 3 zones",
    ],
    [
      "failover timeout not above down-after",
      repl({ sentinel: { downAfterMilliseconds: 30000, failoverTimeoutMs: 20000 } }),
      "valkey.replication.sentinel.failoverTimeoutMs",
      "above downAfterMilliseconds (30000)",
    ],
    [
      "parallel syncs above the replicas",
      repl({ replicas: 2, sentinel: { parallelSyncs: 3 } }),
      "valkey.replication.sentinel.parallelSyncs",
      "≤ max(1, valkey.replication.replicas) (2)",
    ],
    [
      "parallel syncs below the replicas while fenced (a silent replica holds the others on the dead primary)",
      repl({ replicas: 3, sentinel: { parallelSyncs: 1 } }),
      "valkey.replication.sentinel.parallelSyncs",
      "1 is below valkey.replication.replicas (3) while minReplicasToWrite is 1",
    ],
    [
      "down-after below 100 ms",
      repl({ sentinel: { downAfterMilliseconds: 10 } }),
      "valkey.replication.sentinel.downAfterMilliseconds",
      "must be ≥ 100",
    ],
    ["max lag 0", repl({ minReplicasMaxLag: 0 }), "valkey.replication.minReplicasMaxLag", "must be ≥ 1"],
    [
      "fenced max lag not below down-after",
      repl({ minReplicasMaxLag: 5, sentinel: { downAfterMilliseconds: 5000 } }),
      "valkey.replication.minReplicasMaxLag",
      "at most valkey.replication.sentinel.downAfterMilliseconds (5000 ms) − 2 s",
    ],
    [
      "fenced max lag + 2 s past down-after (the server's whole-second lag clock)",
      repl({ minReplicasMaxLag: 4, sentinel: { downAfterMilliseconds: 5000 } }),
      "valkey.replication.minReplicasMaxLag",
      "max lag + 2 s",
    ],
    ["unknown Sentinel key", repl({ sentinel: { qourum: 2 } }), "valkey.replication.sentinel.qourum", "unknown key"],
  ];
  it.each(BAD)("%s is reported at its key path", (_d, raw, path, fragment) => {
    const issues = issuesOf(raw);
    const hit = issues.find((i) => i.path === path);
    expect(hit, JSON.stringify(issues)).toBeDefined();
    expect(hit?.message).toContain(fragment);
  });

  it("reports several Sentinel problems in one error, by key path", () => {
    const issues = issuesOf(
      repl(
        { sentinel: { replicas: 2, quorum: 3, downAfterMilliseconds: 9000, failoverTimeoutMs: 8000 } },
        { aws: { zones: ["us-west-2a"] } },
      ),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        "aws.zones",
        "valkey.replication.sentinel.failoverTimeoutMs",
        "valkey.replication.sentinel.quorum",
        "valkey.replication.sentinel.replicas",
        "valkey.replication.sentinel.replicas",
      ].sort(),
    );
  });

  it("does not apply the Sentinel rules in cluster mode", () => {
    expect(issuesOf({ valkey: { mode: "cluster", replication: { sentinel: { replicas: 1, quorum: 1 } } } })).toEqual(
      [],
    );
  });
});
