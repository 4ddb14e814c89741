/**
 * A real Prometheus watching a release on the local real cluster as a user's would: Debian's Prometheus (the local
 * `prometheus` image) in a pod of the release's scrape namespace carrying the scraper labels, so the release's
 * NetworkPolicies admit it exactly as they admit the user's (metrics.scrapeFrom), running the stack's own annotation
 * scrape job (core/metrics/scrape-config.ts, its relabelling unchanged) and the mode's rules at this scrape interval.
 *
 * Debian builds Prometheus without Kubernetes discovery. A sidecar (the node image) stands in for that one part: on
 * each refresh it lists the release's pods and the nodes through the API server, with the pod's ServiceAccount, and
 * serves them over http_sd with the labels Kubernetes discovery (role pod, attach_metadata node) gives: one target per
 * container port (the pod IP alone for a container without one), `__meta_kubernetes_pod_*` labels, annotations and
 * their `present` twins, the node's labels. Everything after the target list is Prometheus's own: relabelling,
 * scrapes over the pod network, rule evaluation, the alert states.
 *
 * Asked from the test process through the API server's port-forward (a pod per question cost a pod start each, on a
 * machine already running three releases); the drill step reads the same URL (drills.alertsFrom).
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { stringify } from "yaml";
import type { Api } from "../../../apps/kube-local/api.js";
import type { ClusterStatus } from "../../../apps/kube-local/cluster.js";
import { annotationScrapeJob } from "../../../core/metrics/scrape-config.js";
import { loadKubeConfig } from "../../../components/kubernetes/pod-api.js";
import { KubePortForwarder, PortForwardConnector } from "../../../components/kubernetes/port-forward-connector.js";
import { localImage, SCRAPER_LABELS } from "./byo-on-pods.js";
import { pollUntil, sleep } from "../../../core/util/poll-until.js";

/** Scrape and rule evaluation interval of this Prometheus, s: the rules' holds are computed for it. */
export const POD_PROMETHEUS_SCRAPE_S = 2;
const PROM_PORT = 9090;
const SD_PORT = 8080;

// Kubernetes discovery's pod role, as a target list for http_sd (see the file's comment). Node 24, no dependencies.
const DISCOVERY = `
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { request } from "node:https";
const SA = "/var/run/secrets/kubernetes.io/serviceaccount";
const API = "https://" + process.env.KUBERNETES_SERVICE_HOST + ":" + process.env.KUBERNETES_SERVICE_PORT;
const get = (path) => new Promise((resolve, reject) => {
  const req = request(API + path, {
    ca: readFileSync(SA + "/ca.crt"),
    headers: { authorization: "Bearer " + readFileSync(SA + "/token", "utf8").trim() },
    timeout: 5000,
  }, (res) => {
    let text = "";
    res.on("data", (c) => (text += c));
    res.on("end", () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : {} }));
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", reject);
  req.end();
});
const name = (s) => s.replace(/[^a-zA-Z0-9_]/g, "_");
const pairs = (prefix, m) => Object.fromEntries(Object.entries(m ?? {}).flatMap(([k, v]) => [
  [prefix + "_" + name(k), v], [prefix + "present_" + name(k), "true"],
]));
async function groups() {
  const nodes = await get("/api/v1/nodes");
  if (nodes.status !== 200) throw new Error("nodes: HTTP " + nodes.status);
  const nodeLabels = new Map(nodes.body.items.map((n) => [n.metadata.name, n.metadata.labels]));
  const out = [];
  for (const ns of process.env.NAMESPACES.split(",")) {
    const pods = await get("/api/v1/namespaces/" + ns + "/pods");
    if (pods.status === 404) continue;
    if (pods.status !== 200) throw new Error(ns + " pods: HTTP " + pods.status);
    for (const p of pods.body.items) {
      const ip = p.status.podIP;
      if (!ip) continue;
      const ready = (p.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
      const pod = {
        __meta_kubernetes_namespace: ns,
        __meta_kubernetes_pod_name: p.metadata.name,
        __meta_kubernetes_pod_ip: ip,
        __meta_kubernetes_pod_uid: p.metadata.uid,
        __meta_kubernetes_pod_phase: p.status.phase ?? "",
        __meta_kubernetes_pod_ready: String(ready),
        __meta_kubernetes_pod_node_name: p.spec.nodeName ?? "",
        __meta_kubernetes_pod_host_ip: p.status.hostIP ?? "",
        ...pairs("__meta_kubernetes_pod_label", p.metadata.labels),
        ...pairs("__meta_kubernetes_pod_annotation", p.metadata.annotations),
        ...(p.spec.nodeName ? { __meta_kubernetes_node_name: p.spec.nodeName } : {}),
        ...pairs("__meta_kubernetes_node_label", nodeLabels.get(p.spec.nodeName)),
      };
      for (const c of p.spec.containers) {
        const container = { __meta_kubernetes_pod_container_name: c.name, __meta_kubernetes_pod_container_image: c.image };
        if (!c.ports?.length) out.push({ targets: [ip], labels: { ...pod, ...container } });
        for (const port of c.ports ?? [])
          out.push({ targets: [ip + ":" + port.containerPort], labels: { ...pod, ...container,
            __meta_kubernetes_pod_container_port_name: port.name ?? "",
            __meta_kubernetes_pod_container_port_number: String(port.containerPort),
            __meta_kubernetes_pod_container_port_protocol: port.protocol ?? "TCP" } });
      }
    }
  }
  return out;
}
createServer((req, res) => {
  groups().then(
    (g) => { res.setHeader("content-type", "application/json"); res.end(JSON.stringify(g)); },
    (e) => { console.error(String(e)); res.statusCode = 500; res.end(String(e)); },
  );
}).listen(${SD_PORT}, "127.0.0.1", () => console.log("discovery on ${SD_PORT}"));
`;

/** What one run-once pod asks Prometheus. */
export interface Ask {
  /** Wait (inside the pod) until this many targets are up, at most `timeoutMs`. */
  targetsUp?: { count: number; timeoutMs: number };
  instant?: string[];
  range?: Array<{ expr: string; startS: number; endS: number; stepS: number }>;
}

export interface Answer {
  targets: Array<{ labels: Record<string, string>; health: string; lastError: string }>;
  instant: Record<string, Array<{ metric: Record<string, string>; value: [number, string] }>>;
  range: Record<string, Array<{ metric: Record<string, string>; values: Array<[number, string]> }>>;
}

/** Asks Prometheus's HTTP API at `base`: ready, then the targets (waited for when asked), the queries. */
async function askPrometheus(base: string, spec: Ask): Promise<Answer> {
  const json = async <T>(path: string): Promise<T> => {
    const r = await fetch(base + path, { signal: AbortSignal.timeout(10_000) });
    const body = (await r.json()) as { status: string; data: T };
    if (body.status !== "success") throw new Error(`${path}: ${JSON.stringify(body)}`);
    return body.data;
  };
  const ready = () =>
    fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(3000) }).then(
      (r) => r.ok,
      () => false,
    );
  await pollUntil(async () => (await ready()) || "not ready", {
    timeoutMs: 120_000,
    intervalMs: 1000,
    what: "Prometheus ready",
  });
  type Active = { activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> };
  const targets = async () =>
    (await json<Active>("/api/v1/targets?state=active")).activeTargets.map((t) => ({
      labels: t.labels,
      health: t.health,
      lastError: t.lastError,
    }));
  let t = await targets();
  if (spec.targetsUp !== undefined) {
    const until = Date.now() + spec.targetsUp.timeoutMs;
    while (t.filter((x) => x.health === "up").length < spec.targetsUp.count && Date.now() < until) {
      await sleep(1000);
      t = await targets();
    }
  }
  type Result<V> = { result: V };
  const instant: Answer["instant"] = {};
  for (const q of spec.instant ?? [])
    instant[q] = (await json<Result<Answer["instant"][string]>>(`/api/v1/query?query=${encodeURIComponent(q)}`)).result;
  const range: Answer["range"] = {};
  for (const q of spec.range ?? [])
    range[q.expr] = (
      await json<Result<Answer["range"][string]>>(
        `/api/v1/query_range?query=${encodeURIComponent(q.expr)}&start=${q.startS}&end=${q.endS}&step=${q.stepS}`,
      )
    ).result;
  return { targets: t, instant, range };
}

export interface PodPrometheus {
  ask(spec: Ask): Promise<Answer>;
  /**
   * Its HTTP API on this machine, through the API server's port-forward (for `drills.alertsFrom`: the drill step runs
   * in `pulumi up` here, as a user's would with `kubectl port-forward`).
   */
  url: string;
  /** Deletes the pod's namespace and its discovery ClusterRole and binding. */
  stop(): Promise<void>;
}

export interface PodPrometheusOptions {
  api: Api;
  cluster: ClusterStatus;
  /** The release's namespace: the one discovery lists. */
  ns: string;
  /** The namespace Prometheus runs in (metrics.scrapeFrom.namespace); it must exist. */
  scrapeNs: string;
  /** The node Prometheus and its asking pods run on (the one without Valkey). */
  node: string;
  /** The rule file Prometheus evaluates. */
  rules: string;
}

/** prometheus.yml: the stack's annotation job over the sidecar's targets, every POD_PROMETHEUS_SCRAPE_S. */
export function podPrometheusConfig(ns: string): string {
  const s = POD_PROMETHEUS_SCRAPE_S;
  const { kubernetes_sd_configs: _discovery, ...job } = annotationScrapeJob({
    namespaces: [ns],
    scrapeIntervalSeconds: s,
  });
  return stringify({
    global: { scrape_interval: `${s}s`, scrape_timeout: `${s}s`, evaluation_interval: `${s}s` },
    rule_files: ["/etc/prometheus/rules.yaml"],
    scrape_configs: [{ ...job, http_sd_configs: [{ url: `http://127.0.0.1:${SD_PORT}/`, refresh_interval: `${s}s` }] }],
  });
}

async function created(api: Api, path: string, body: Record<string, unknown>): Promise<void> {
  const r = await api("POST", path, body);
  expect(r.status, `${path}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(201);
}

/** The discovery's read access: pods (the release's namespace) and nodes (their zones), nothing else. */
async function grantDiscovery(api: Api, o: PodPrometheusOptions, name: string): Promise<void> {
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  await api("DELETE", `${rbac}/clusterrolebindings/${name}`);
  await api("DELETE", `${rbac}/clusterroles/${name}`);
  await created(api, `${rbac}/clusterroles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules: [{ apiGroups: [""], resources: ["pods", "nodes"], verbs: ["get", "list"] }],
  });
  await created(api, `${rbac}/clusterrolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: o.scrapeNs }],
  });
  await created(api, `/api/v1/namespaces/${o.scrapeNs}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "prometheus" },
  });
}

function prometheusPod(o: PodPrometheusOptions): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "prometheus", labels: { ...SCRAPER_LABELS, "app.kubernetes.io/name": "prometheus" } },
    spec: {
      nodeName: o.node,
      serviceAccountName: "prometheus",
      containers: [
        {
          name: "prometheus",
          image: localImage(o.cluster, "prometheus"),
          imagePullPolicy: "Never",
          args: [
            "--config.file=/etc/prometheus/prometheus.yml",
            "--storage.tsdb.path=/prometheus",
            `--web.listen-address=:${PROM_PORT}`,
          ],
          volumeMounts: [
            { name: "config", mountPath: "/etc/prometheus" },
            { name: "data", mountPath: "/prometheus" },
          ],
        },
        {
          name: "discovery",
          image: localImage(o.cluster, "node"),
          imagePullPolicy: "Never",
          command: ["node", "--input-type=module", "-e", DISCOVERY],
          env: [{ name: "NAMESPACES", value: o.ns }],
        },
      ],
      volumes: [
        { name: "config", configMap: { name: "prometheus" } },
        { name: "data", emptyDir: {} },
      ],
    },
  };
}

/** The Prometheus pod's `port` on 127.0.0.1, through the API server's port-forward (the stack's own connector). */
async function forwardToPod(
  o: PodPrometheusOptions,
  ip: string,
  port: number,
): Promise<{ url: string; close: () => void }> {
  const pod = { name: "prometheus", podIP: ip, nodeName: undefined, zone: undefined, ready: true, labels: {} };
  const connector = new PortForwardConnector({
    namespace: o.scrapeNs,
    pods: [{ ...pod, ordinal: undefined, subdomain: undefined, port, busPort: 0 }],
    forwarder: new KubePortForwarder(loadKubeConfig(readFileSync(o.cluster.kubeconfig, "utf8"))),
  });
  const local = await connector.localPort({ host: ip, port });
  return { url: `http://127.0.0.1:${local}`, close: () => void connector.close() };
}

/** Starts the Prometheus pod and waits until it answers ready (asked from a pod beside it). */
export async function startPrometheusOnPods(o: PodPrometheusOptions): Promise<PodPrometheus> {
  const { api, scrapeNs } = o;
  const role = `${scrapeNs}-discovery`;
  await grantDiscovery(api, o, role);
  await created(api, `/api/v1/namespaces/${scrapeNs}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "prometheus" },
    data: { "prometheus.yml": podPrometheusConfig(o.ns), "rules.yaml": o.rules },
  });
  await created(api, `/api/v1/namespaces/${scrapeNs}/pods`, prometheusPod(o));
  let ip = "";
  await pollUntil(
    async () => {
      const { body } = await api<{ status: { phase?: string; podIP?: string } }>(
        "GET",
        `/api/v1/namespaces/${scrapeNs}/pods/prometheus`,
      );
      ip = body.status.phase === "Running" ? (body.status.podIP ?? "") : "";
      return ip !== "" || `phase ${body.status.phase ?? "unknown"}`;
    },
    { timeoutMs: 180_000, intervalMs: 500, what: "the Prometheus pod to run" },
  );
  // Asked from here through the API server's port-forward (as the drill step reads it with drills.alertsFrom).
  const forward = await forwardToPod(o, ip, PROM_PORT);
  const ask = (spec: Ask): Promise<Answer> => askPrometheus(forward.url, spec);
  await ask({});
  return {
    ask,
    url: forward.url,
    stop: async () => {
      forward.close();
      const rbac = "/apis/rbac.authorization.k8s.io/v1";
      await api("DELETE", `${rbac}/clusterrolebindings/${role}`);
      await api("DELETE", `${rbac}/clusterroles/${role}`);
      await api("DELETE", `/api/v1/namespaces/${scrapeNs}`);
    },
  };
}
