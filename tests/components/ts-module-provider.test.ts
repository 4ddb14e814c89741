/**
 * The dynamic-provider shells called directly in-process: each loads its implementation module
 * with tsx's tsImport (as the dynamic-provider process does) and talks to a FAKE Kubernetes API
 * server (a local HTTP server answering pod list and node reads, requiring the kubeconfig's
 * bearer token) through the REAL client-node CoreV1Api, then to REAL cluster-enabled
 * valkey-server processes through the direct connector. And where the serialized shell finds the
 * project it runs in: a copy of the checkout at another path (tests/support/where-step.ts reports
 * which module was loaded).
 */
import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { openClient } from "../../core/topology/connector.js";
import { clusterBootstrapProvider } from "../../components/steps/cluster-bootstrap/component.js";
import {
  PROJECT_ROOT,
  PROJECT_ROOT_ENV,
  findProjectRoot,
  projectRelative,
  tsModuleProvider,
} from "../../components/steps/kit/ts-module-provider.js";
import { topologyCheckProvider } from "../../components/steps/topology-check/component.js";
import { liveConfigProvider } from "../../components/steps/live-config/component.js";
import { copyCheckout, runSerializedProvider, serializeProviderUnderTsx } from "../support/serialized-provider.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const token = `tok-${Math.random().toString(36).slice(2)}`;
const zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];

/** Answers GET pods (label selector ignored: every pod is the release's) and GET node. */
function fakeApiServer(servers: readonly ValkeyProcess[]): Server {
  const pods = servers.map((s, i) => ({
    metadata: { name: `valkey-${i}`, namespace: "data", labels: { app: "valkey" } },
    spec: {
      nodeName: `node-${i % 3}`,
      containers: [
        {
          name: "valkey",
          ports: [
            { name: "valkey", containerPort: s.port },
            { name: "cluster-bus", containerPort: s.clusterPort },
          ],
        },
      ],
    },
    status: { podIP: "127.0.0.1", conditions: [{ type: "Ready", status: "True" }] },
  }));
  return createServer((req, res) => {
    const send = (code: number, body: unknown): void => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`)
      return send(401, { kind: "Status", code: 401, message: "Unauthorized" });
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/api/v1/namespaces/data/pods" && url.searchParams.get("labelSelector") === "app=valkey") {
      return send(200, { kind: "PodList", apiVersion: "v1", metadata: {}, items: pods });
    }
    const node = /^\/api\/v1\/nodes\/(node-\d)$/.exec(url.pathname)?.[1];
    if (node !== undefined) {
      return send(200, {
        kind: "Node",
        apiVersion: "v1",
        metadata: { name: node, labels: { "topology.kubernetes.io/zone": zones[Number(node.slice(5))] } },
      });
    }
    send(404, { kind: "Status", code: 404, message: `no route ${url.pathname}` });
  });
}

describe("dynamic-provider shells, in-process, against a fake API server and real Valkey", () => {
  const fleet = new LocalFleet();
  let servers: ValkeyProcess[];
  let api: Server;
  let inputs: Record<string, unknown>;

  beforeAll(async () => {
    servers = await fleet.startMany(6, (i) => ({
      name: `sh-${i}`,
      clusterEnabled: true,
      password,
      clusterNodeTimeoutMs: 2000,
    }));
    api = fakeApiServer(servers);
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const kubeconfig = JSON.stringify({
      "apiVersion": "v1",
      "kind": "Config",
      "clusters": [
        {
          name: "fake",
          cluster: {
            "server": `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
            "insecure-skip-tls-verify": true,
          },
        },
      ],
      "users": [{ name: "u", user: { token } }],
      "contexts": [{ name: "fake", context: { cluster: "fake", user: "u" } }],
      "current-context": "fake",
    });
    inputs = { namespace: "data", selector: "app=valkey", connector: "direct", kubeconfig, password };
  });
  afterAll(async () => {
    await new Promise((resolve) => api.close(resolve));
    await fleet.stopAll();
  });

  it("ClusterBootstrap: create forms the cluster; diff/update with the same inputs change nothing", async () => {
    const provider = clusterBootstrapProvider();
    const bootInputs = { ...inputs, expectedPods: 6, primaries: 3, replicasPerPrimary: 1, timeoutMs: 30_000 };
    const created = await provider.create(bootInputs);
    const outs = created.outs as Record<string, unknown> & {
      changed: boolean;
      nodeIds: unknown;
      plan: { shards: { primary: { zone: string }; replicas: { zone: string }[] }[] };
    };
    expect(created.id).toBe("data/app=valkey");
    expect(outs.changed).toBe(true);
    expect(outs.plan.shards).toHaveLength(3);
    for (const s of outs.plan.shards) expect(s.replicas.every((r) => r.zone !== s.primary.zone)).toBe(true);
    expect(outs).not.toHaveProperty("kubeconfig");
    expect(outs).not.toHaveProperty("password");
    expect(JSON.stringify(outs)).not.toContain(password);
    expect(JSON.stringify(outs)).not.toContain(token);
    expect(outs).toMatchObject({
      namespace: "data",
      selector: "app=valkey",
      primaries: 3,
      replicasPerPrimary: 1,
      expectedPods: 6,
    });

    expect(await provider.diff?.(created.id, outs, bootInputs)).toEqual({ changes: false, replaces: [] });
    const updated = await provider.update?.(created.id, outs, bootInputs);
    expect(updated?.outs).toMatchObject({ changed: false, nodeIds: outs.nodeIds });
    await expect(
      provider.update?.(created.id, outs, { ...bootInputs, primaries: 2, replicasPerPrimary: 2 }),
    ).rejects.toThrow(
      /scaling an existing cluster from 3 primaries x 1 replicas \(6 pods\) to 2 primaries x 2 replicas \(6 pods\) is not supported yet/,
    );
  });

  it("TopologyCheck: create passes on the formed cluster, and fails pulumi up with codes and the table when slots are missing", async () => {
    const provider = topologyCheckProvider();
    const checkInputs = {
      ...inputs,
      mode: "cluster",
      expect: { primaries: 3, replicasPerPrimary: 1 },
      triggers: ["x"],
    };
    const ok = await provider.create(checkInputs);
    expect((ok.outs as { report: { ok: boolean; primariesPerZone: unknown } }).report).toMatchObject({
      ok: true,
      primariesPerZone: { "eu-west-1a": 1, "eu-west-1b": 1, "eu-west-1c": 1 },
    });
    expect(JSON.stringify(ok.outs)).not.toContain(password);

    const owner = await ownerOfSlot(0);
    const oc = await openClient("127.0.0.1", owner, "owner", { password });
    try {
      await oc.call("CLUSTER", "DELSLOTSRANGE", "0", "99");
      await expect(provider.create(checkInputs)).rejects.toThrow(
        /topology check failed \(cluster mode\): .*SLOTS_UNASSIGNED[^]*VERIFY: FAIL/,
      );
    } finally {
      await oc.call("CLUSTER", "ADDSLOTSRANGE", "0", "99");
      oc.disconnect();
    }
  });

  it("LiveConfig: create sets nothing and reaches no pod; an update sets the directives on every pod the API server lists and confirms them; a refused value fails naming the pod and key", async () => {
    const provider = liveConfigProvider();
    const policy = async () =>
      Promise.all(
        servers.map(async (s) => {
          const c = await openClient("127.0.0.1", s.port, s.name, { password });
          try {
            return ((await c.call("CONFIG", "GET", "maxmemory-policy")) as string[])[1];
          } finally {
            c.disconnect();
          }
        }),
      );
    const before = await policy();
    const created = await provider.create({ ...inputs, directives: { "maxmemory-policy": "volatile-lru" } });
    expect(created.id).toBe("data/app=valkey/live-config");
    expect(created.outs).toMatchObject({ keys: [], pods: [] });
    expect(await policy(), "create set nothing").toEqual(before);
    expect(before).not.toContain("volatile-lru");

    const liveInputs = {
      ...inputs,
      directives: { "cluster-node-timeout": "2500", "maxmemory-policy": "volatile-lru" },
    };
    const updated = await provider.update?.(created.id, created.outs, liveInputs);
    expect(updated?.outs).toMatchObject({
      keys: ["cluster-node-timeout", "maxmemory-policy"],
      pods: servers.map((_, i) => `valkey-${i}`),
    });
    expect(JSON.stringify(updated?.outs)).not.toContain(password);
    expect(JSON.stringify(updated?.outs)).not.toContain(token);
    expect(await policy()).toEqual(servers.map(() => "volatile-lru"));
    await expect(
      provider.update?.(created.id, updated?.outs, { ...inputs, directives: { "cluster-node-timeout": "-1" } }),
    ).rejects.toThrow(/valkey-0 cluster-node-timeout: CONFIG SET cluster-node-timeout '-1' refused/);
    await provider.update?.(created.id, updated?.outs, {
      ...inputs,
      directives: { "cluster-node-timeout": "2000", "maxmemory-policy": before[0] as string },
    });
  });

  /** The client port of the primary owning `slot` (from CLUSTER SLOTS on the first server). */
  async function ownerOfSlot(slot: number): Promise<number> {
    const c = await openClient("127.0.0.1", (servers[0] as ValkeyProcess).port, "n0", { password });
    try {
      const ranges = (await c.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
      const r = ranges.find(([a, b]) => a <= slot && slot <= b);
      if (r === undefined) throw new Error(`slot ${slot} has no owner`);
      return r[2][1];
    } finally {
      c.disconnect();
    }
  }
});

describe("the serialized provider in a plain node process (as @pulumi/pulumi/cmd/dynamic-provider runs it)", () => {
  it("serializes under tsx, loads with require-from-string in plain node, and reaches the implementation", async () => {
    const text = serializeProviderUnderTsx(
      "components/steps/cluster-bootstrap/component.ts",
      "clusterBootstrapProvider",
    );
    expect(text).toContain("cluster-bootstrap/implementation.ts");
    // A plain node, outside the project directory, with no loader flags: like the provider process.
    const out = await runSerializedProvider(text, [
      `const same = { namespace: "d", selector: "a=b", primaries: 3, replicasPerPrimary: 1, expectedPods: 6 };`,
      `Promise.all([p.diff("id", same, same), p.diff("id", same, { ...same, primaries: 4 })])`,
      `  .then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stderr.write(String(e)); process.exit(1); });`,
    ]);
    expect(JSON.parse(out)).toEqual([
      { changes: false, replaces: [] },
      { changes: true, replaces: [] },
    ]);
  });
});

describe("where a dynamic provider finds the project: relative to it at call time, never an absolute path in the state", () => {
  const whereStep = fileURLToPath(new URL("../support/where-step.ts", import.meta.url));
  let copy: string;
  let text: string;
  beforeAll(async () => {
    copy = copyCheckout();
    const provider = tsModuleProvider(whereStep, undefined, { undoes: true });
    ({ text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: false }));
  }, 60_000);
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  const created = (options: Parameters<typeof runSerializedProvider>[3]): Promise<string> =>
    runSerializedProvider(
      text,
      [
        `p.create({}).then((r) => process.stdout.write(JSON.stringify(r.outs)), (e) => { process.stdout.write("ERROR " + e.message); });`,
      ],
      30_000,
      options,
    );

  it("serializes the module's path relative to the project and no path of this checkout", () => {
    expect(text).toContain('"tests/support/where-step.ts"');
    expect(text).not.toContain(PROJECT_ROOT);
    const underTsx = serializeProviderUnderTsx("components/steps/volume-release/component.ts", "volumeReleaseProvider");
    expect(underTsx).toContain('"components/steps/volume-release/implementation.ts"');
    expect(underTsx).not.toContain(PROJECT_ROOT);
    expect(projectRelative(whereStep)).toBe("tests/support/where-step.ts");
    expect(() => projectRelative(join(tmpdir(), "x.ts"))).toThrow(/is not inside the project/);
  });

  it("finds the checkout from the first anchor below which the module exists", () => {
    const rel = "tests/support/where-step.ts";
    expect(findProjectRoot(rel, [undefined, join(copy, "stacks"), PROJECT_ROOT])).toBe(copy);
    expect(
      findProjectRoot(rel, ["", join(copy, "node_modules/@pulumi/pulumi/cmd/dynamic-provider"), PROJECT_ROOT]),
    ).toBe(copy);
    expect(findProjectRoot(rel, [tmpdir(), join(PROJECT_ROOT, "stacks")])).toBe(PROJECT_ROOT.replace(/\/$/, ""));
    expect(findProjectRoot(rel, [tmpdir(), "/"])).toBeUndefined();
  });

  it("run from a copy at another path, the serialized provider loads the copy's module (its stacks/ is the Pulumi CLI's working directory)", async () => {
    const outs = JSON.parse(await created({ cwd: join(copy, "stacks") })) as { module: string };
    expect(outs.module).toBe(pathToFileURL(join(copy, "tests/support/where-step.ts")).href);
  });

  it("one provider process evaluates a step module once, however many calls it serves", async () => {
    const out = await runSerializedProvider(
      text,
      [
        `(async () => { const r = []; for (let i = 0; i < 3; i++) r.push((await p.create({})).outs.evaluations);`,
        `  r.push((await p.update("where", {}, {})).outs.evaluations); return r; })()`,
        `  .then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stdout.write("ERROR " + e.message); });`,
      ],
      30_000,
      { cwd: join(copy, "stacks") },
    );
    expect(out).toBe("[1,1,1,1]");
  });

  it("outside any checkout it names what to do; VALKEY_ON_EKS_ROOT points it at one", async () => {
    const env = { ...process.env };
    delete env[PROJECT_ROOT_ENV];
    expect(await created({ cwd: tmpdir(), env })).toMatch(
      /^ERROR cannot find tests\/support\/where-step\.ts above .*: run Pulumi from a valkey-on-eks checkout \(or set VALKEY_ON_EKS_ROOT to one\)$/,
    );
    const outs = JSON.parse(await created({ cwd: tmpdir(), env: { ...env, [PROJECT_ROOT_ENV]: copy } })) as {
      module: string;
    };
    expect(outs.module).toBe(pathToFileURL(join(copy, "tests/support/where-step.ts")).href);
  });

  it("an undoing provider's delete runs the copy's module; its diff asks for an update while the stored provider text differs (one up rewrites older state)", async () => {
    const marker = join(copy, "deleted.json");
    const out = await runSerializedProvider(
      text,
      [`p.delete("where", ${JSON.stringify({ marker })}).then(() => process.stdout.write("DELETED"));`],
      30_000,
      {
        cwd: join(copy, "stacks"),
      },
    );
    expect(out).toBe("DELETED");
    expect((JSON.parse(readFileSync(marker, "utf8")) as { module: string }).module).toBe(
      pathToFileURL(join(copy, "tests/support/where-step.ts")).href,
    );

    const undoing = tsModuleProvider(whereStep, undefined, { undoes: true });
    const plain = tsModuleProvider(whereStep);
    expect(
      await undoing.diff?.("where", { __provider: "old text with /old/checkout/paths" }, { __provider: text }),
    ).toEqual({ changes: true, replaces: [] });
    expect(await undoing.diff?.("where", { __provider: text }, { __provider: text })).toEqual({
      changes: false,
      replaces: [],
    });
    expect(await undoing.diff?.("where", {}, { __provider: text })).toEqual({ changes: false, replaces: [] });
    expect(await plain.diff?.("where", { __provider: "old text" }, { __provider: text })).toEqual({
      changes: false,
      replaces: [],
    });
  });
});
