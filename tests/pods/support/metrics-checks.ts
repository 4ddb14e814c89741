/**
 * The deployed metrics on real pods (metrics.enabled, the default): every pod the stack annotated
 * for scraping is scraped over the pod network by a run-once pod (the node image's fetch) in the
 * stack's `metrics.scrapeFrom` namespace carrying its labels, as a Prometheus there would be.
 * Every target answers 200; the exporters beside the members and Sentinels report `redis_up 1`
 * (they logged in with the password from the Secret); the union of each component's expositions
 * holds every metric the mode's alert rules select for it (the same check tests/harness/
 * exporter-metrics.test.ts makes on processes, here on the deployed images and ports); replication:
 * exactly one member reports role master, cluster: every member cluster_state 1. Then the
 * NetworkPolicy's side: the same scrape from that namespace WITHOUT the labels, and from the
 * release's own namespace as a labelled client, reaches no target.
 */
import { expect } from "vitest";
import type { Api } from "../../../apps/kube-local/api.js";
import type { ClusterStatus } from "../../../apps/kube-local/cluster.js";
import { CLIENT_LABEL } from "../../../components/shared.js";
import { METRICS_COMPONENT_ANNOTATION } from "../../../core/metrics/targets.js";
import { alertInputs } from "../../../core/metrics/alert-definition.js";
import { metricsByComponent, ruleGroups } from "../../../core/metrics/rule-file.js";
import { parseStackConfig } from "../../../config/schema.js";
import { localImage, SCRAPER_LABELS, scrapeNamespace } from "./byo-on-pods.js";
import { runOnce } from "./probe.js";

interface Target {
  pod: string;
  component: string;
  url: string;
}

interface Scraped {
  status?: number;
  error?: string;
  names?: string[];
  /** The lines of redis_up, redis_instance_info, redis_cluster_state. */
  lines?: string[];
}

// Fetches every URL at once and prints one JSON line. 15 s each: a NetworkPolicy drop is a timeout, and an admitted
// Sentinel exporter (which asks its Sentinel per scrape) took over 4 s beside three releases on two cores (2026-12-01).
const SCRAPE = `
const urls = process.argv.slice(1);
const one = async (u) => {
  try {
    const r = await fetch(u, { signal: AbortSignal.timeout(15000) });
    const text = await r.text();
    const names = [...new Set(text.split("\\n").map((l) => /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(l)?.[1]).filter(Boolean))];
    const lines = text.split("\\n").filter((l) => /^(redis_up|redis_instance_info|redis_cluster_state)[{ ]/.test(l));
    return [u, { status: r.status, names, lines }];
  } catch (e) {
    return [u, { error: String(e?.cause?.code ?? e?.name ?? e) }];
  }
};
console.log(JSON.stringify(Object.fromEntries(await Promise.all(urls.map(one)))));
`;

export interface MetricsCheck {
  api: Api;
  cluster: ClusterStatus;
  /** The release's namespace. */
  ns: string;
  mode: "cluster" | "replication";
  /** Where the scraping pods run (the node without Valkey). */
  node: string;
}

interface PodList {
  items: Array<{
    metadata: { name: string; annotations?: Record<string, string> };
    spec: { containers: Array<{ name: string; image: string }> };
    status: { podIP?: string; phase?: string };
  }>;
}

async function scrape(api: Api, c: MetricsCheck, ns: string, labels: Record<string, string>, targets: Target[]) {
  const { log } = await runOnce(api, {
    ns,
    node: c.node,
    image: localImage(c.cluster, "node"),
    labels,
    command: ["node", "--input-type=module", "-e", SCRAPE, ...targets.map((t) => t.url)],
  });
  const out = JSON.parse(log.trim().split("\n").pop() ?? "{}") as Record<string, Scraped>;
  expect(Object.keys(out).sort(), log).toEqual(targets.map((t) => t.url).sort());
  return out;
}

/** The namespace `name`, empty: one a previous run left is deleted first. */
export async function freshNamespace(api: Api, name: string): Promise<void> {
  await api("DELETE", `/api/v1/namespaces/${name}`);
  for (let i = 0; i < 240 && (await api("GET", `/api/v1/namespaces/${name}`)).status === 200; i++)
    await new Promise((r) => setTimeout(r, 500));
  const created = await api("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  expect(created.status).toBe(201);
  // The ServiceAccount admission refuses pods until the namespace's default account exists.
  for (
    let i = 0;
    i < 120 && (await api("GET", `/api/v1/namespaces/${name}/serviceaccounts/default`)).status !== 200;
    i++
  )
    await new Promise((r) => setTimeout(r, 500));
}

/** The annotated pods of the release as scrape targets; checks the exporter containers beside the servers. */
async function targetsOf(c: MetricsCheck): Promise<Target[]> {
  const pods = (await c.api<PodList>("GET", `/api/v1/namespaces/${c.ns}/pods`)).body.items.filter(
    (p) => p.metadata.annotations?.["prometheus.io/scrape"] === "true" && p.status.phase === "Running",
  );
  const targets = pods.map((p) => {
    const a = p.metadata.annotations ?? {};
    return {
      pod: p.metadata.name,
      component: a[METRICS_COMPONENT_ANNOTATION] ?? "",
      url: `http://${p.status.podIP ?? ""}:${a["prometheus.io/port"] ?? ""}${a["prometheus.io/path"] ?? ""}`,
    };
  });
  const count = (component: string): number => targets.filter((t) => t.component === component).length;
  expect([count("valkey"), count("sentinel"), count("haproxy")], JSON.stringify(targets)).toEqual(
    c.mode === "cluster" ? [6, 0, 0] : [4, 3, 2],
  );
  const exporterImage = localImage(c.cluster, "exporter");
  for (const p of pods.filter((x) => x.metadata.annotations?.[METRICS_COMPONENT_ANNOTATION] !== "haproxy"))
    expect(p.spec.containers.map((x) => x.image)[1], p.metadata.name).toBe(exporterImage);
  return targets;
}

/** The scrape namespace (scrapeNamespace) must exist; the lifecycle creates it before its first `up`. */
export async function expectMetricsOnRealPods(c: MetricsCheck): Promise<void> {
  const scrapeNs = scrapeNamespace(c.ns);
  const targets = await targetsOf(c);
  const got = await scrape(c.api, c, scrapeNs, SCRAPER_LABELS, targets);
  const failed = targets
    .filter((t) => got[t.url]?.status !== 200)
    .map((t) => `${t.pod}: ${JSON.stringify(got[t.url])}`);
  expect(failed, "targets that did not answer the scraper").toEqual([]);
  const lines = (t: Target): string[] => got[t.url]?.lines ?? [];
  for (const t of targets.filter((x) => x.component !== "haproxy"))
    expect(lines(t), `${t.pod}: redis_up`).toContain("redis_up 1");
  // Every metric the mode's rules select, per component, in the union of its targets' expositions.
  const wanted = metricsByComponent(
    ruleGroups(alertInputs(parseStackConfig({ valkey: { mode: c.mode } }).config.valkey)),
  );
  // (A rule for members and Sentinels names `sentinel` in cluster mode too, which has no Sentinel.)
  const present = new Set(targets.map((t) => t.component));
  expect(
    [...present].every((x) => wanted.has(x)),
    `components without rules: ${[...present].join(", ")}`,
  ).toBe(true);
  for (const [component, names] of [...wanted].filter(([x]) => present.has(x))) {
    const emitted = new Set(targets.filter((t) => t.component === component).flatMap((t) => got[t.url]?.names ?? []));
    expect(
      [...names].filter((n) => !emitted.has(n)),
      `${component}: metrics the rules need`,
    ).toEqual([]);
  }
  const valkey = targets.filter((t) => t.component === "valkey");
  if (c.mode === "replication") {
    const masters = valkey.filter((t) => lines(t).some((l) => /^redis_instance_info\{.*role="master".*\} 1$/.test(l)));
    expect(
      masters.map((t) => t.pod),
      "members reporting role master",
    ).toHaveLength(1);
  } else {
    for (const t of valkey) expect(lines(t), `${t.pod}: cluster_state`).toContain("redis_cluster_state 1");
  }
  console.log(
    `[pods] ${c.mode} metrics: ${targets.length} targets scraped from ${scrapeNs} (${targets.map((t) => `${t.pod}=${got[t.url]?.names?.length ?? 0} metrics`).join(", ")})`,
  );

  // Not admitted: the scrape namespace without the labels, the release's own namespace as a client.
  for (const [ns, labels] of [
    [scrapeNs, {}],
    [c.ns, { [CLIENT_LABEL]: "true" }],
  ] as const) {
    const denied = await scrape(c.api, c, ns, labels, targets);
    const reached = targets.filter((t) => denied[t.url]?.status !== undefined).map((t) => t.pod);
    expect(reached, `pods reached from ${ns} with labels ${JSON.stringify(labels)}`).toEqual([]);
  }
}
