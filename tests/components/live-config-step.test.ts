/**
 * The LiveConfig step's implementation (components/steps/live-config/) on two REAL valkey-server
 * processes found through a StaticPodApi (the pods' IPs and ports are the local servers'), with
 * the `direct` connector and a password: created (a new stack, or one from before the step) it
 * sets nothing and reaches no member (the members started from the ConfigMap holding these
 * values); an update sets and confirms the directives on every member, fails naming the pod and
 * the key a server refuses; it re-runs only when the directives change, and refuses a RESTART
 * directive at preview.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";
import type { KubeDeps } from "../../components/steps/kit/kube-access.js";
import { liveConfigStep, type LiveConfigInputs } from "../../components/steps/live-config/declaration.js";
import { check, create, diff, runLiveConfig, update } from "../../components/steps/live-config/implementation.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const fleet = new LocalFleet();
let servers: ValkeyProcess[] = [];
let deps: KubeDeps;

const raw = (directives: Record<string, string>) => ({
  namespace: "data",
  selector: "app=v",
  kubeconfig: "unused",
  connector: "direct",
  password,
  directives,
});
const inputs = (directives: Record<string, string>): LiveConfigInputs => liveConfigStep.parse(raw(directives));
const quiet = () => undefined;

async function configGet(s: ValkeyProcess, key: string): Promise<string | undefined> {
  const c = new Redis({ host: s.host, port: s.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
  await c.connect();
  try {
    return ((await c.call("CONFIG", "GET", key)) as string[])[1];
  } finally {
    c.disconnect();
  }
}

beforeAll(async () => {
  servers = await fleet.startMany(2, (i) => ({ name: `step-${i}`, password }));
  const api = new StaticPodApi(
    servers.map((s, i) => ({
      name: `v-${i}`,
      podIP: s.host,
      nodeName: `node-${i}`,
      labels: { app: "v" },
      ports: { valkey: s.port },
    })),
    { "node-0": "zone-a", "node-1": "zone-b" },
  );
  deps = { podApi: api, connector: () => new DirectConnector({ password }) };
}, 60_000);
afterAll(async () => fleet.stopAll());

describe("LiveConfig on real servers", () => {
  it("create sets nothing and reaches no member: the members started from the file", async () => {
    const before = await configGet(servers[0]!, "maxmemory-policy");
    // The kubeconfig is not one: reaching the cluster would fail.
    const created = await create(
      raw({ "maxmemory-policy": before === "volatile-ttl" ? "allkeys-lfu" : "volatile-ttl" }),
    );
    expect(created.id).toBe("data/app=v/live-config");
    expect(created.outs).toMatchObject({ keys: [], pods: [] });
    for (const s of servers) expect(await configGet(s, "maxmemory-policy"), s.name).toBe(before);
  });

  it("an update sets and confirms every directive on every member; its outputs name the keys and the pods, never the password", async () => {
    const out = await runLiveConfig(
      inputs({ "maxmemory-policy": "allkeys-lfu", "cluster-node-timeout": "7000" }),
      deps,
      quiet,
    );
    expect(out).toEqual({ keys: ["cluster-node-timeout", "maxmemory-policy"], pods: ["v-0", "v-1"] });
    for (const s of servers) {
      expect(await configGet(s, "maxmemory-policy"), s.name).toBe("allkeys-lfu");
      expect(await configGet(s, "cluster-node-timeout"), s.name).toBe("7000");
    }
    const olds = { ...raw({ "maxmemory-policy": "allkeys-lfu" }), keys: [], pods: [] };
    const updated = await update("id", olds, raw({ "maxmemory-policy": "volatile-ttl" }), deps);
    expect(updated.outs).toMatchObject({
      keys: ["maxmemory-policy"],
      pods: ["v-0", "v-1"],
      directives: { "maxmemory-policy": "volatile-ttl" },
    });
    expect(JSON.stringify(updated.outs)).not.toContain(password);
    for (const s of servers) expect(await configGet(s, "maxmemory-policy"), s.name).toBe("volatile-ttl");
  });

  it("fails naming each pod and the key a server refuses", async () => {
    await expect(runLiveConfig(inputs({ maxmemory: "lots" }), deps, quiet)).rejects.toThrow(
      /v-0 maxmemory: CONFIG SET maxmemory 'lots' refused[\s\S]*v-1 maxmemory/,
    );
  });

  it("re-runs when a directive's value changes, not on a setting; refuses a RESTART or unknown directive at preview", () => {
    const olds = { ...raw({ "maxmemory-policy": "allkeys-lru" }), keys: [], pods: [] };
    expect(diff("id", olds, raw({ "maxmemory-policy": "allkeys-lfu" })).changes).toBe(true);
    expect(diff("id", olds, { ...raw({ "maxmemory-policy": "allkeys-lru" }), timeoutMs: 5 }).changes).toBe(false);
    expect(check({}, raw({ "maxmemory-policy": "allkeys-lru" })).failures).toEqual([]);
    expect(check({}, raw({ "io-threads": "4", "no-such-key": "1" })).failures).toEqual([
      { property: "directives", reason: "io-threads needs a restart, not CONFIG SET (pod/conf-directives.ts)" },
      {
        property: "directives",
        reason: "no-such-key is not a classified valkey.conf directive (pod/conf-directives.ts)",
      },
    ]);
  });
});
