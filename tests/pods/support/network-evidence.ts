/**
 * What each node's Cilium believes about a namespace's pods, printed when an `up` on real pods
 * fails. A Sentinel that cannot reach a replica on another node for minutes (SENTINEL_REPLICA_DOWN
 * in CI, its link open and unanswered) means a NetworkPolicy drop: the sending node's Cilium
 * (egress) or the receiving node's (ingress) maps the peer's IP to the wrong identity, or to none.
 * This reads, for every pod of the namespace, the identity its CiliumEndpoint carries and the one
 * each node's ipcache holds for its IP (the agent's own API, `GET /v1/ip`, through the agent's
 * mount namespace), and names every node that disagrees and every other CiliumEndpoint claiming
 * the same IP (a stale one, or a reused address). Read-only.
 */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import type { Api } from "../../../benchmarks/kube-local/api.js";
import { cgroupPids } from "../../../benchmarks/kube-local/host.js";
import type { ClusterPlan } from "../../../benchmarks/kube-local/plan.js";

interface Endpoint {
  namespace: string;
  name: string;
  ip: string;
  identity: number | undefined;
}
interface IpEntry {
  cidr: string;
  identity: number;
  metadata?: { namespace?: string; name?: string; source?: string };
}

/** The pid of the cilium-agent running in a node's cgroup subtree, or undefined. */
function agentPid(cgroup: string): number | undefined {
  return cgroupPids(cgroup).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "cilium-agent";
    } catch {
      return false;
    }
  });
}

/** GET on a node's Cilium API socket, seen through the agent's own root (its mount namespace). */
function agentGet<T>(pid: number, path: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath: `/proc/${pid}/root/run/cilium/cilium.sock`, path, method: "GET", timeout: 10_000 },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
          else resolve(JSON.parse(body) as T);
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on("error", reject);
    req.end();
  });
}

async function ciliumEndpoints(api: Api): Promise<Endpoint[]> {
  const r = await api<{
    items?: Array<{
      metadata: { namespace: string; name: string };
      status?: { identity?: { id?: number }; networking?: { addressing?: Array<{ ipv4?: string }> } };
    }>;
  }>("GET", "/apis/cilium.io/v2/ciliumendpoints");
  if (r.status !== 200) throw new Error(`listing CiliumEndpoints: HTTP ${r.status}`);
  return (r.body.items ?? []).flatMap((e) =>
    (e.status?.networking?.addressing ?? [])
      .filter((a) => a.ipv4 !== undefined)
      .map((a) => ({
        namespace: e.metadata.namespace,
        name: e.metadata.name,
        ip: a.ipv4!,
        identity: e.status?.identity?.id,
      })),
  );
}

/** One line per pod of `namespace` whose IP some node's ipcache maps elsewhere, or a line saying none does. */
export function describeDisagreements(
  namespace: string,
  endpoints: Endpoint[],
  views: Map<string, IpEntry[] | string>,
): string[] {
  const lines: string[] = [];
  for (const ep of endpoints.filter((e) => e.namespace === namespace)) {
    const wrong: string[] = [];
    for (const [node, view] of views) {
      if (typeof view === "string") continue;
      const entry = view.find((v) => v.cidr === `${ep.ip}/32`);
      if (entry === undefined) wrong.push(`${node}: no entry`);
      else if (entry.identity !== ep.identity)
        wrong.push(
          `${node}: identity ${entry.identity} (${entry.metadata?.source ?? "?"} ${entry.metadata?.namespace ?? ""}/${entry.metadata?.name ?? ""})`,
        );
    }
    const others = endpoints
      .filter((e) => e.ip === ep.ip && (e.namespace !== ep.namespace || e.name !== ep.name))
      .map((e) => `${e.namespace}/${e.name}`);
    if (wrong.length > 0 || others.length > 0)
      lines.push(
        `  ${ep.name} ${ep.ip} (CiliumEndpoint identity ${ep.identity ?? "none"}): ${wrong.join("; ") || "every node agrees"}` +
          (others.length > 0 ? `; the same IP also claimed by ${others.join(", ")}` : ""),
      );
  }
  for (const [node, view] of views) if (typeof view === "string") lines.push(`  ${node}: ipcache not read (${view})`);
  return lines.length > 0
    ? lines
    : [
        `  every node's ipcache maps each of the ${endpoints.filter((e) => e.namespace === namespace).length} pods' IPs to its CiliumEndpoint's identity`,
      ];
}

/** The evidence as text; never throws (a failure to read is part of the text). */
export async function networkEvidence(api: Api, plan: ClusterPlan, namespace: string): Promise<string> {
  try {
    const endpoints = await ciliumEndpoints(api);
    const views = new Map<string, IpEntry[] | string>();
    for (const node of plan.nodes) {
      const pid = agentPid(node.cgroup);
      if (pid === undefined) views.set(node.name, "no cilium-agent process");
      else views.set(node.name, await agentGet<IpEntry[]>(pid, "/v1/ip").catch((err: Error) => err.message));
    }
    return [
      `network evidence (Cilium, namespace ${namespace}):`,
      ...describeDisagreements(namespace, endpoints, views),
    ].join("\n");
  } catch (err) {
    return `network evidence (Cilium, namespace ${namespace}) not read: ${(err as Error).message}`;
  }
}

/** Runs `step`; when it fails, its error message gains the network evidence of `namespace`. */
export async function withNetworkEvidence<T>(
  api: Api,
  plan: ClusterPlan,
  namespace: string,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const evidence = await networkEvidence(api, plan, namespace);
    if (err instanceof Error) {
      err.message = `${err.message}\n${evidence}`;
      throw err;
    }
    throw new Error(`${String(err)}\n${evidence}`, { cause: err });
  }
}
