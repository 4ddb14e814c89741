/**
 * What each node's Cilium believes about a namespace's pods, printed when an `up` on real pods
 * fails. A Sentinel that cannot reach a replica on another node for minutes (SENTINEL_REPLICA_DOWN
 * in CI, its link open and unanswered) means a NetworkPolicy drop: the sending node's Cilium
 * (egress) or the receiving node's (ingress) maps the peer's IP to the wrong identity, or to none.
 * This reads, for every pod of the namespace, the identity its CiliumEndpoint carries and the one
 * each node's ipcache holds for its IP (the agent's own API, `GET /v1/ip`, through the agent's
 * mount namespace), and names every node that disagrees and every other CiliumEndpoint claiming
 * the same IP (a stale one, or a reused address). Read-only.
 *
 * It also answers, from inside every Sentinel pod (its network and mount namespaces, entered from
 * the host), the two questions a Sentinel that flags a replica `disconnected` raises: what the
 * replica's stable name resolves to there (Sentinel re-resolves it on each reconnect), and whether
 * that pod reaches the replica's current IP at all (a `valkey-cli PING`; NOAUTH is an answer).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import type { Api } from "../../../apps/kube-local/api.js";
import { cgroupPids } from "../../../apps/kube-local/host.js";
import type { ClusterPlan } from "../../../apps/kube-local/plan.js";
import { VALKEY_PORT } from "../../../vocabulary/ports.js";
import { endpointEvents } from "./endpoint-events.js";

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

interface PodView {
  name: string;
  ip: string | undefined;
  /** `<hostname>.<subdomain>.<namespace>.svc.cluster.local`, for pods with a stable name. */
  fqdn: string | undefined;
}

async function namespacePods(api: Api, namespace: string): Promise<PodView[]> {
  const r = await api<{
    items?: Array<{
      metadata: { name: string };
      spec?: { hostname?: string; subdomain?: string };
      status?: { podIP?: string };
    }>;
  }>("GET", `/api/v1/namespaces/${namespace}/pods`);
  if (r.status !== 200) throw new Error(`listing pods of ${namespace}: HTTP ${r.status}`);
  return (r.body.items ?? []).map((p) => ({
    name: p.metadata.name,
    ip: p.status?.podIP,
    fqdn:
      p.spec?.hostname !== undefined && p.spec.subdomain !== undefined
        ? `${p.spec.hostname}.${p.spec.subdomain}.${namespace}.svc.cluster.local`
        : undefined,
  }));
}

/**
 * The host pid of pod `name`'s Valkey process (valkey-server or valkey-sentinel: its mount
 * namespace has valkey-cli), found by its containers' HOSTNAME in the nodes' cgroups. Another
 * container of the pod (the metrics exporter) shares the HOSTNAME but not the image.
 */
function podPid(plan: ClusterPlan, name: string): number | undefined {
  for (const node of plan.nodes)
    for (const pid of cgroupPids(node.cgroup)) {
      try {
        if (
          readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`HOSTNAME=${name}`) &&
          readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("valkey")
        )
          return pid;
      } catch {
        /* gone, or a kernel thread */
      }
    }
  return undefined;
}

/** Runs `argv` inside the network and mount namespaces of `pid`; its output, or the error's first line. */
function inPod(pid: number, argv: string[]): string {
  try {
    return execFileSync("nsenter", ["-t", String(pid), "-n", "-m", "timeout", "5", ...argv], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 10_000,
    }).trim();
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `failed: ${(e.stderr || e.stdout || e.message).trim().split("\n")[0]}`;
  }
}

/** One line per (Sentinel pod, member): what the member's name resolves to there, against its pod IP. */
export function describeResolution(
  from: string,
  member: { name: string; ip: string | undefined },
  answer: string,
  reach: string,
): string {
  const failed = answer.startsWith("failed") || answer === "";
  const resolved = failed ? answer : (answer.split(/\s+/)[0] ?? "");
  const verdict =
    member.ip === undefined
      ? "the pod has no IP"
      : failed
        ? "NOT RESOLVED"
        : resolved === member.ip
          ? "current"
          : `STALE (pod IP ${member.ip})`;
  return `  ${from} -> ${member.name}: resolves to ${resolved || "nothing"} (${verdict}); PING its pod IP: ${reach}`;
}

/** From each Sentinel pod, every Valkey member's name resolved and its pod IP pinged; never throws. */
async function resolutionEvidence(api: Api, plan: ClusterPlan, namespace: string, port: number): Promise<string[]> {
  const pods = await namespacePods(api, namespace);
  const sentinels = pods.filter((p) => p.name.includes("sentinel"));
  const members = pods.filter((p) => p.fqdn !== undefined && !p.name.includes("sentinel"));
  const lines: string[] = [];
  for (const s of sentinels) {
    const pid = podPid(plan, s.name);
    if (pid === undefined) {
      lines.push(`  ${s.name}: no process found on any node`);
      continue;
    }
    for (const m of members) {
      const answer = inPod(pid, ["getent", "ahostsv4", m.fqdn as string]);
      const reach =
        m.ip === undefined
          ? "-"
          : inPod(pid, ["valkey-cli", "--no-auth-warning", "-h", m.ip, "-p", String(port), "PING"]);
      lines.push(describeResolution(s.name, m, answer, reach));
    }
  }
  return lines.length > 0 ? lines : ["  no Sentinel pod in the namespace"];
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
      `names and reach, from each Sentinel pod:`,
      ...(await resolutionEvidence(api, plan, namespace, VALKEY_PORT).catch((err: Error) => [
        `  not read: ${err.message}`,
      ])),
    ].join("\n");
  } catch (err) {
    return `network evidence (Cilium, namespace ${namespace}) not read: ${(err as Error).message}`;
  }
}

/** Runs `step`; when it fails, its error message gains the network evidence of `namespace` and its endpoint's events. */
export async function withNetworkEvidence<T>(
  api: Api,
  plan: ClusterPlan,
  namespace: string,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const evidence = `${await networkEvidence(api, plan, namespace)}\n${await endpointEvents(api, namespace)}`;
    if (err instanceof Error) {
      err.message = `${err.message}\n${evidence}`;
      throw err;
    }
    throw new Error(`${String(err)}\n${evidence}`, { cause: err });
  }
}
