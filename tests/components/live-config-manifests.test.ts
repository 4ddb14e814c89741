/**
 * The members' pod-template hash (the `valkey-on-eks/config-hash` annotation, and so the
 * RollingRestart step's templateHash) covers only the RESTART part of valkey.conf: a change of
 * LIVE directives alone (maxmemory-policy, appendfsync, fencing, cluster-node-timeout) leaves both
 * unchanged and reaches the LiveConfig step's input instead, while the ConfigMap still carries the
 * whole new file; a RESTART directive (io-threads) changes both.
 */
import { describe, expect, it } from "vitest";
import type { ValkeyConfig } from "../../config/types.js";
import { buildClusterManifests } from "../../components/valkey/cluster-manifests.js";
import { buildReplicationManifests } from "../../components/valkey/replication-manifests.js";
import { CONFIG_HASH_ANNOTATION } from "../../components/valkey/statefulset.js";
import { VALKEY_CONF_KEY } from "../../pod/member.js";
import { PLACEMENT, valkeyConfig } from "../support/valkey-fixtures.js";

const build = {
  cluster: (valkey: ValkeyConfig) =>
    buildClusterManifests({
      namespace: "valkey",
      release: "valkey-cluster",
      valkey: { ...valkey, mode: "cluster" },
      placement: PLACEMENT,
      auth: true,
    }),
  replication: (valkey: ValkeyConfig) =>
    buildReplicationManifests({ namespace: "valkey", release: "valkey", valkey, placement: PLACEMENT, auth: true }),
};

function seen(mode: keyof typeof build, valkey: ValkeyConfig) {
  const m = build[mode](valkey);
  return {
    annotation: m.statefulSet.spec?.template?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION],
    templateHash: m.rollout.templateHash,
    conf: m.configMap.data?.[VALKEY_CONF_KEY] ?? "",
    live: m.rollout.live,
  };
}

describe.each(["cluster", "replication"] as const)("%s members", (mode) => {
  const base = valkeyConfig();
  const a = seen(mode, base);

  it("a maxmemory-policy change: same annotation and templateHash, a new ConfigMap conf, a new LiveConfig input", () => {
    const b = seen(mode, { ...base, maxmemoryPolicy: "volatile-lfu" });
    expect(a.annotation).toMatch(/^[0-9a-f]{16}$/);
    expect(b.annotation).toBe(a.annotation);
    expect(b.templateHash).toBe(a.templateHash);
    expect(b.conf).not.toBe(a.conf);
    expect(b.conf).toContain("maxmemory-policy volatile-lfu");
    expect(a.live["maxmemory-policy"]).toBe("allkeys-lru");
    expect(b.live["maxmemory-policy"]).toBe("volatile-lfu");
  });

  it("other LIVE settings (persistence, maxmemory, fencing, cluster-node-timeout) roll nothing either", () => {
    const b = seen(mode, {
      ...base,
      maxmemoryBytes: base.maxmemoryBytes - 2 ** 20,
      persistence: { ...base.persistence, aof: false, rdb: false, appendfsync: "always" },
      replication: { ...base.replication, minReplicasToWrite: 0, minReplicasMaxLag: 2 },
      cluster: { ...base.cluster, nodeTimeoutMs: 5000 },
    });
    expect(b.templateHash).toBe(a.templateHash);
    expect(b.live).not.toEqual(a.live);
  });

  it("an io-threads change (a RESTART directive) changes the annotation and the templateHash, not the LiveConfig input", () => {
    const b = seen(mode, { ...base, ioThreads: base.ioThreads + 1 });
    expect(b.annotation).not.toBe(a.annotation);
    expect(b.templateHash).not.toBe(a.templateHash);
    expect(b.live).toEqual(a.live);
  });
});
