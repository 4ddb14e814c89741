/**
 * The stand-ins the failure drills rely on, each against the real API server, controllers,
 * scheduler and kwok (no Pulumi here: the objects are created through the API directly):
 *  - a Valkey pod deleted through the API (grace period 0) has its real server killed at once;
 *    the StatefulSet controller recreates the pod, which gets a NEW IP (the plane's freshPodIps:
 *    kwok's own pool would hand the freed address back first), and the stand-in starts the server
 *    again on that address with the same data directory: a cluster member keeps its node ID (its
 *    peer sees that ID at the new address), a replica serves the data again;
 *  - a recreated pod of a zone whose node is cordoned stays Pending under the hard zone spread
 *    the components render (zoneSpread), and is placed back on that node once uncordoned;
 *  - a Job pod shaped like the failure drill's load Job (the drill-load label, a ConfigMap volume
 *    at /drill, `node /drill/load.mjs`, env with a Service host and a secretKeyRef) runs its own
 *    script with this process's Node against the real server behind the Service, its stdout is
 *    what `pods/log` returns through the API server, and the Job completes.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zoneSpread } from "../../components/valkey/pod-placement.js";
import { eventually } from "../support/processes.js";
import { DEFAULT_ZONES } from "./support/control-plane.js";
import { standInForDrillLoadJobs } from "./support/drill-load-pods.js";
import { useE2eContext } from "./support/e2e-context.js";
import type { JobPods } from "./support/job-pods.js";
import { standInForPods, type PodValkeys } from "./support/pod-valkeys.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-restart`;
const NS = "restarts";
/** A random /16 away from the per-worker defaults' usual values: e2e runs of other worktrees use those. */
const POD_CIDR = `127.${80 + Math.floor(Math.random() * 16)}.0.0/16`;
const ctx = useE2eContext(undefined, { freshPodIps: true, holdJobPods: true, podCidr: POD_CIDR });

let valkeys: PodValkeys;
let loads: JobPods;
beforeAll(async () => {
  await ctx.plane.api("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  await eventually("default ServiceAccount", 60_000, async () =>
    (await ctx.plane.api("GET", `/api/v1/namespaces/${NS}/serviceaccounts/default`, undefined, { allow: [404] })).status === 200 ? true : undefined,
  );
  valkeys = standInForPods(ctx.core, NS, PASSWORD);
  loads = standInForDrillLoadJobs(ctx.core, ctx.plane, NS);
}, 120_000);
afterAll(async () => {
  await loads?.stop();
  await valkeys?.stop();
}, 120_000);

const POOL = {
  nodeSelector: { "karpenter.sh/nodepool": "valkey" },
  tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
};

/** A StatefulSet of `replicas` pods labelled `labels`, one `valkey` container with `ports`. */
async function statefulSet(name: string, replicas: number, labels: Record<string, string>, extra: Record<string, unknown> = {}, ports = [6379]): Promise<void> {
  await ctx.plane.api("POST", `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      serviceName: name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...labels } },
        spec: {
          ...POOL,
          ...extra,
          containers: [
            {
              name: "valkey",
              image: "valkey/valkey:8",
              ports: ports.map((p) => ({ containerPort: p, name: p === 6379 ? "valkey" : "cluster-bus" })),
            },
          ],
        },
      },
    },
  });
}

interface PodView {
  uid: string;
  ip: string | undefined;
  node: string | undefined;
  phase: string | undefined;
}

async function pod(name: string): Promise<PodView | undefined> {
  const { status, body } = await ctx.plane.api<{
    metadata: { uid: string };
    spec: { nodeName?: string };
    status: { podIP?: string; phase?: string };
  }>("GET", `/api/v1/namespaces/${NS}/pods/${name}`, undefined, { allow: [404] });
  if (status === 404) return undefined;
  return { uid: body.metadata.uid, ip: body.status.podIP, node: body.spec.nodeName, phase: body.status.phase };
}

const deletePod = (name: string, grace = 0) => ctx.plane.api("DELETE", `/api/v1/namespaces/${NS}/pods/${name}?gracePeriodSeconds=${grace}`);

const client = (host: string): Redis =>
  new Redis({ host, port: 6379, password: PASSWORD, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });

async function withClient<T>(host: string, f: (r: Redis) => Promise<T>): Promise<T> {
  const r = client(host);
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** Waits for the pod's server to be restarted after a deletion; returns the restart record. */
async function restarted(name: string, oldUid: string) {
  return eventually(`${name} restarted on its recreated pod`, 120_000, () => {
    const r = valkeys.restarts.find((x) => x.pod === name && x.oldUid === oldUid && x.newIp !== undefined);
    return Promise.resolve(r);
  });
}

describe("stand-ins for pod deletion, cordoned zones and the drill's load Job", () => {
  it("a cluster member deleted with grace 0 is killed, comes back on a new IP with its node ID, and its peer sees it there", async () => {
    await statefulSet("cm", 2, { "app.kubernetes.io/name": "valkey", "valkey-on-eks/role": "member" }, {}, [6379, 16379]);
    const [a, b] = await eventually("both members served", 120_000, () => {
      const x = valkeys.servers.get("cm-0");
      const y = valkeys.servers.get("cm-1");
      return Promise.resolve(x && y ? ([x, y] as const) : undefined);
    });
    await withClient(a.host, (r) => r.call("CLUSTER", "MEET", b.host, "6379", "16379"));
    await eventually("the two members know each other", 60_000, () =>
      withClient(a.host, async (r) => ((await r.call("CLUSTER", "NODES")) as string).includes(`${b.host}:6379`) || undefined),
    );
    const id = await withClient(b.host, async (r) => (await r.call("CLUSTER", "MYID")) as string);
    const before = await pod("cm-1");
    expect(before?.ip).toBe(b.host);

    const deletedAt = Date.now();
    await deletePod("cm-1");
    const r = await restarted("cm-1", before?.uid ?? "");
    // Killed at once (the stand-in polls every 250 ms; generous for a loaded machine).
    expect(r.killedAt - deletedAt).toBeLessThan(5000);
    expect(b.alive()).toBe(false);
    const after = await pod("cm-1");
    expect(after?.uid).toBe(r.newUid);
    expect(after?.uid).not.toBe(before?.uid);
    expect(r.oldIp).toBe(before?.ip);
    expect(r.newIp).toBe(after?.ip);
    expect(after?.ip, "a recreated pod gets a new address").not.toBe(before?.ip);
    // Same data directory: the same node ID, announced at the new address.
    expect(await withClient(r.newIp as string, async (c) => (await c.call("CLUSTER", "MYID")) as string)).toBe(id);
    await eventually("the peer sees the member's ID at its new address", 60_000, () =>
      withClient(a.host, async (c) => {
        const line = ((await c.call("CLUSTER", "NODES")) as string).split("\n").find((l) => l.startsWith(id));
        return line?.includes(`${r.newIp}:6379`) ? line : undefined;
      }),
    );
    expect(ctx.plane.podIpErrors).toEqual([]);
    expect(valkeys.errors).toEqual([]);
  }, 300_000);

  it("a replica deleted with grace 0 comes back on a new IP and serves the primary's data again", async () => {
    await statefulSet("rp", 1, { "app.kubernetes.io/name": "valkey", "valkey-on-eks/role": "primary" });
    const primary = await eventually("the primary served", 120_000, () => Promise.resolve(valkeys.servers.get("rp-0")));
    await statefulSet("rr", 1, { "app.kubernetes.io/name": "valkey", "valkey-on-eks/role": "replica" });
    const replica = await eventually("the replica served", 120_000, () => Promise.resolve(valkeys.servers.get("rr-0")));
    await withClient(primary.host, async (r) => {
      await r.set("drill:before-delete", "kept");
      expect(await r.call("WAIT", "1", "5000")).toBe(1);
    });
    const before = await pod("rr-0");
    await deletePod("rr-0");
    const r = await restarted("rr-0", before?.uid ?? "");
    expect(r.newIp).not.toBe(replica.host);
    expect((await pod("rr-0"))?.ip).toBe(r.newIp);
    const value = await eventually("the key on the replica's new address", 60_000, () =>
      withClient(r.newIp as string, async (c) => (await c.get("drill:before-delete")) ?? undefined),
    );
    expect(value).toBe("kept");
    expect(await withClient(r.newIp as string, async (c) => (await c.info("replication")).match(/^role:(\w+)/m)?.[1])).toBe("slave");
  }, 300_000);

  it("a zone's recreated pod stays Pending while that zone's node is cordoned (hard zone spread), and returns once uncordoned", async () => {
    const spread = zoneSpread({ app: "zs" }, DEFAULT_ZONES.length);
    await statefulSet("zs", 3, { "e2e/stand-in": "none" }, { topologySpreadConstraints: [spread] });
    const nodes = await eventually("three zs pods on three nodes", 120_000, async () => {
      const pods = await Promise.all([0, 1, 2].map((i) => pod(`zs-${i}`)));
      const placed = pods.map((p) => p?.node).filter((n): n is string => n !== undefined);
      return new Set(placed).size === 3 ? pods : undefined;
    });
    const victim = nodes[0] as PodView;
    const node = victim.node as string;
    await ctx.plane.api("PATCH", `/api/v1/nodes/${node}`, { spec: { unschedulable: true } }, { contentType: "application/merge-patch+json" });
    try {
      await deletePod("zs-0");
      const recreated = await eventually("zs-0 recreated", 60_000, async () => {
        const p = await pod("zs-0");
        return p !== undefined && p.uid !== victim.uid ? p : undefined;
      });
      // Held for 15 s: never scheduled elsewhere, the scheduler says why.
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        const p = await pod("zs-0");
        expect(p?.uid).toBe(recreated.uid);
        expect(p?.node).toBeUndefined();
        expect(p?.phase).toBe("Pending");
        await new Promise((res) => setTimeout(res, 1000));
      }
      const { body } = await ctx.plane.api<{ status: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }>(
        "GET",
        `/api/v1/namespaces/${NS}/pods/zs-0`,
      );
      const scheduled = body.status.conditions?.find((c) => c.type === "PodScheduled");
      expect(scheduled?.status).toBe("False");
      expect(scheduled?.reason).toBe("Unschedulable");
      expect(scheduled?.message).toMatch(/topology spread constraints/);
    } finally {
      await ctx.plane.api("PATCH", `/api/v1/nodes/${node}`, { spec: { unschedulable: false } }, { contentType: "application/merge-patch+json" });
    }
    const back = await eventually("zs-0 placed again once uncordoned", 120_000, async () => {
      const p = await pod("zs-0");
      return p?.node !== undefined && p.ip !== undefined ? p : undefined;
    });
    expect(back.node).toBe(node);
  }, 300_000);

  it("a drill-load Job pod runs its ConfigMap script with the pod's env; its stdout is the pod log through the API server; the Job completes", async () => {
    const primary = valkeys.servers.get("rp-0");
    expect(primary, "the primary of the replica test").toBeDefined();
    const api = ctx.plane.api.bind(ctx.plane);
    await api("POST", `/api/v1/namespaces/${NS}/secrets`, { apiVersion: "v1", kind: "Secret", metadata: { name: "auth" }, stringData: { password: PASSWORD } });
    await api("POST", `/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "write" },
      spec: { selector: { app: "rp" }, ports: [{ port: 6379 }] },
    });
    // A tiny load: PINGs and SETs through the Service host with the password from the env, raw RESP.
    const script = `
import { connect } from "node:net";
const host = process.env.DRILL_TARGET_HOST, port = Number(process.env.DRILL_TARGET_PORT);
const arg = (s) => "$" + Buffer.byteLength(s) + "\\r\\n" + s + "\\r\\n";
const cmd = (...a) => "*" + a.length + "\\r\\n" + a.map(arg).join("");
const sock = connect({ host, port });
let got = "";
sock.on("data", (d) => {
  got += d;
  if (got.split("\\r\\n").length > 3) {
    console.log("drill-load stand-in " + import.meta.url.endsWith("/load.mjs") + " " + host + " " + got.split("\\r\\n").slice(0, 3).join(" "));
    console.log("drill-load end 0");
    sock.end();
  }
});
sock.write(cmd("AUTH", process.env.VALKEY_PASSWORD) + cmd("PING") + cmd("SET", process.env.DRILL_KEY_PREFIX + "1", "v"));
`;
    await api("POST", `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "load" }, data: { "load.mjs": script } });
    await api("POST", `/apis/batch/v1/namespaces/${NS}/jobs`, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "load" },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { labels: { "valkey-on-eks/drill-load": "true" } },
          spec: {
            restartPolicy: "Never",
            containers: [
              {
                name: "drill-load",
                image: "node:22",
                command: ["node", "/drill/load.mjs"],
                env: [
                  { name: "DRILL_TARGET_HOST", value: `write.${NS}.svc.cluster.local` },
                  { name: "DRILL_TARGET_PORT", value: "6379" },
                  { name: "DRILL_KEY_PREFIX", value: "drill:job:" },
                  { name: "VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "auth", key: "password" } } },
                ],
                volumeMounts: [{ name: "drill", mountPath: "/drill", readOnly: true }],
              },
            ],
            volumes: [{ name: "drill", configMap: { name: "load" } }],
          },
        },
      },
    });
    await eventually("the load Job to complete", 120_000, async () => {
      if (loads.errors.length > 0) return false; // fails below with the stand-in's error
      const { body } = await api<{ status: { succeeded?: number } }>("GET", `/apis/batch/v1/namespaces/${NS}/jobs/load`);
      return body.status.succeeded === 1 ? true : undefined;
    }).catch(async (e: unknown) => {
      const { body } = await api<{ items: { metadata: { name: string; labels?: object }; spec: { nodeName?: string }; status: object }[] }>(
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=job-name`,
      );
      throw new Error(`${(e as Error).message}; load pods: ${JSON.stringify(body.items.map((p) => [p.metadata, p.spec.nodeName, p.status]))}`);
    });
    expect(loads.errors).toEqual([]);
    const { body: pods } = await api<{ items: { metadata: { name: string } }[] }>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=job-name%3Dload`);
    const name = pods.items[0]?.metadata.name ?? "";
    const { body: log } = await api<string>("GET", `/api/v1/namespaces/${NS}/pods/${name}/log`);
    expect(log).toBe(`drill-load stand-in true ${primary?.host} +OK +PONG +OK\ndrill-load end 0\n`);
    expect(log).not.toContain(PASSWORD);
    expect(await withClient(primary?.host as string, (r) => r.get("drill:job:1"))).toBe("v");
  }, 300_000);
});
