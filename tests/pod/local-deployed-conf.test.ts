/**
 * The local Sentinel topology (npm run local, the replication drills) runs the valkey.conf the
 * stack deploys: the ConfigMap's text is a prefix of every local member's conf, and the running
 * members (real valkey-server processes started by the rendered start.sh) answer CONFIG GET
 * with the deployed settings: fencing, persistence, memory. The cluster drill target likewise runs
 * the deployed cluster-member conf, with cluster-node-timeout set to the drill's detection time and
 * IP endpoints (see cluster-pod.ts for why).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { renderValkeyConf } from "../../pod/valkey-conf.js";
import { defaultValkeyConfig } from "../../pod/local-conf.js";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";

const password = "local-deployed-conf-pw";

describe("local replication members run the deployed valkey.conf (real processes)", () => {
  let t: SentinelTopology | undefined;
  beforeAll(async () => {
    t = await SentinelTopology.start({
      replicas: 1,
      zones: ["a", "b", "c"],
      password,
      downAfterMs: 2000,
      failoverTimeoutMs: 6000,
      proxy: false,
      hostBase: 120,
    });
  }, 120_000);
  afterAll(async () => t?.stopAll());

  it("CONFIG GET on every member equals the deployed defaults (min-replicas-to-write 1, max lag 3, AOF everysec, RDB, maxmemory)", async () => {
    const valkey = defaultValkeyConfig();
    const deployed = renderValkeyConf(valkey, { role: { kind: "replication-member" } });
    const want: Record<string, string> = {};
    for (const key of [
      "min-replicas-to-write",
      "min-replicas-max-lag",
      "appendonly",
      "appendfsync",
      "maxmemory",
      "maxmemory-policy",
      "replica-read-only",
    ]) {
      const line = deployed.split("\n").find((l) => l.startsWith(`${key} `));
      expect(line, `the deployed conf sets ${key}`).toBeDefined();
      want[key] = (line as string).slice(key.length + 1);
    }
    expect(want["min-replicas-to-write"]).toBe("1");
    for (const m of t!.members) {
      const c = new Redis({ host: m.host, port: m.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await c.connect();
        const got: Record<string, string> = {};
        for (const key of Object.keys(want)) {
          const [, value] = (await c.config("GET", key)) as [string, string];
          got[key] = value;
        }
        expect(got, m.name).toEqual(want);
        expect(((await c.config("GET", "save")) as string[])[1]).toBe("3600 1 300 100 60 10000");
      } finally {
        c.disconnect();
      }
    }
  });

  it("the ConfigMap's valkey.conf (listener and dir aside) is the head of each local member's conf", () => {
    const valkey = defaultValkeyConfig();
    const member = t!.members[0]!;
    const local = readFileSync(join(member.dataDir, "..", "valkey.conf"), "utf8");
    const dropLocation = (text: string): string[] =>
      text.split("\n").filter((l) => !/^(port|bind|dir|include) /.test(l) && l !== "");
    const deployed = dropLocation(renderValkeyConf(valkey, { role: { kind: "replication-member" } }));
    expect(dropLocation(local).slice(0, deployed.length)).toEqual(deployed);
  });

  it("a topology with fewer replicas than the deployed min-replicas-to-write is refused, naming the key", async () => {
    await expect(SentinelTopology.start({ replicas: 0, zones: ["a"], proxy: false })).rejects.toThrow(
      /valkey\.replication\.minReplicasToWrite/,
    );
    const unfenced = parseStackConfig({
      valkey: { replication: { replicas: 0, minReplicasToWrite: 0 } },
      checks: { verify: false },
    }).config.valkey;
    expect(unfenced.replication.minReplicasToWrite).toBe(0);
  });
});

describe("local cluster members run the deployed cluster-member valkey.conf (real processes)", () => {
  let t: ClusterTarget | undefined;
  beforeAll(async () => {
    t = await ClusterTarget.start({
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["zone-a", "zone-b", "zone-c"],
      password,
      failureDetectionMs: 2000,
      failoverTimeoutMs: 6000,
      restartDelayMs: 3000,
      zoneDownMs: 8000,
      hostBase: 230,
    });
  }, 180_000);
  afterAll(async () => t?.stop());

  it("CONFIG GET on every member equals the deployed cluster-member settings; only cluster-node-timeout is the drill's", async () => {
    const deployed = renderValkeyConf(defaultValkeyConfig(), { role: { kind: "cluster-member" } });
    const want: Record<string, string> = {};
    for (const key of ["appendonly", "appendfsync", "maxmemory", "maxmemory-policy", "cluster-require-full-coverage"]) {
      const line = deployed.split("\n").find((l) => l.startsWith(`${key} `));
      expect(line, `the deployed conf sets ${key}`).toBeDefined();
      want[key] = (line as string).slice(key.length + 1);
    }
    expect(deployed).toContain("cluster-preferred-endpoint-type hostname");
    for (const p of t!.pods) {
      const c = new Redis({ host: p.host, port: p.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await c.connect();
        const got: Record<string, string> = {};
        for (const key of Object.keys(want)) got[key] = ((await c.config("GET", key)) as [string, string])[1];
        expect(got, p.name).toEqual(want);
        expect(((await c.config("GET", "cluster-node-timeout")) as string[])[1]).toBe("2000");
        // The one deliberate local difference (cluster-pod.ts says why): no DNS for the announced names.
        expect(((await c.config("GET", "cluster-preferred-endpoint-type")) as string[])[1]).toBe("ip");
      } finally {
        c.disconnect();
      }
    }
  });
});
