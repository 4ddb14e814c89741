/**
 * A real Prometheus on this machine (Debian's 2.42, the package that also brings promtool; or the
 * binary `$PROMETHEUS` names): it scrapes the given targets every second, with their labels as given
 * or through the deployed scrape job's relabelling (ScrapeJobKind), evaluates the given rule file
 * every second, and answers the HTTP API. The targets come from files it watches (file service
 * discovery), so they can change while it runs, as pods come and go under Kubernetes discovery. Its
 * TSDB lives in a temporary directory removed on stop.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { pollUntil } from "../../core/util/poll-until.js";
import { runAtExit } from "../../core/util/process-reaper.js";
import { freePort } from "../local/ports.js";
import { debianBinary, ended, exitedEarly } from "./process.js";
import { annotationScrapeJob, meta, POD_LABEL_SOURCES } from "../../core/metrics/scrape-config.js";
import { METRICS_COMPONENT_ANNOTATION, RELEASE_POD_LABEL, SCRAPE_ANNOTATIONS } from "../../core/metrics/targets.js";

export interface ScrapeTarget {
  /** host:port */
  address: string;
  labels: Record<string, string>;
  /** @default "/metrics" */
  path?: string;
}

export interface FiringAlert {
  name: string;
  state: "pending" | "firing";
  labels: Record<string, string>;
  activeAt: string;
}

export interface RunningPrometheus {
  url: string;
  /** The alerts pending or firing now (`/api/v1/alerts`). */
  alerts: () => Promise<FiringAlert[]>;
  /** Every target's health, `address -> up|down|unknown`. */
  targets: () => Promise<Record<string, string>>;
  /** When each rule group was last evaluated (`/api/v1/rules`), ms since the epoch. */
  ruleEvaluations: () => Promise<number[]>;
  /** A range query's matrix (`/api/v1/query_range`, times in s since the epoch): each series' labels and values. */
  range: (
    expr: string,
    fromMs: number,
    toMs: number,
    stepS: number,
  ) => Promise<Array<{ labels: Record<string, string>; values: [number, number][] }>>;
  /** An instant query's vector: each sample's labels and value. */
  query: (expr: string) => Promise<Array<{ labels: Record<string, string>; value: number }>>;
  /**
   * Replaces the targets (Prometheus re-reads its discovery files on change): a target gone is marked stale at once,
   * as a deleted pod's is. Only metrics paths it started with.
   */
  setTargets: (targets: readonly ScrapeTarget[]) => void;
  stop: () => Promise<void>;
}

/**
 * How the targets are scraped: `static`, one job per metrics path with each target's labels as
 * given; `deployed`, the stack's own scrape job (core/metrics/scrape-config.ts: its relabelling
 * kept as it is) over what Kubernetes discovery would give it for each target's pod: the labels
 * `namespace`, `release`, `component` and `pod` become the pod's namespace, release label,
 * component annotation and name, and the target's address becomes the annotated port on the pod's
 * address (discovered here on port 1, so a scrape succeeds only through the port rewrite).
 */
export type ScrapeJobKind = "static" | "deployed";

/** What Prometheus's Kubernetes discovery (role pod) gives the deployed job for one annotated pod. */
function discoveredPod(t: ScrapeTarget): { targets: string[]; labels: Record<string, string> } {
  const [host, port] = [
    t.address.slice(0, t.address.lastIndexOf(":")),
    t.address.slice(t.address.lastIndexOf(":") + 1),
  ];
  const need = (k: string): string => {
    const v = t.labels[k];
    if (v === undefined) throw new Error(`a deployed-job target needs the label ${k} (${t.address})`);
    return v;
  };
  return {
    targets: [`${host}:1`],
    labels: {
      __meta_kubernetes_namespace: need("namespace"),
      __meta_kubernetes_pod_name: need("pod"),
      [meta("label", RELEASE_POD_LABEL)]: need("release"),
      [meta("annotation", METRICS_COMPONENT_ANNOTATION)]: need("component"),
      [meta("annotation", SCRAPE_ANNOTATIONS.scrape)]: "true",
      [meta("annotation", SCRAPE_ANNOTATIONS.port)]: port,
      [meta("annotation", SCRAPE_ANNOTATIONS.path)]: t.path ?? "/metrics",
      // The node's zone, as discovery with attach_metadata presents it (only where the target has one).
      ...(t.labels.zone === undefined ? {} : { [POD_LABEL_SOURCES.zone]: t.labels.zone }),
    },
  };
}

/** A target group as discovery gives it (a file discovery entry, the shape of a static_configs entry). */
interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

/** The scrape jobs: each job's name, its settings and its target groups (from its discovery file). */
interface Job {
  name: string;
  settings: Record<string, unknown>;
  groups: TargetGroup[];
}

/** Every metrics path among `targets`, in first-seen order. */
const pathsOf = (targets: readonly ScrapeTarget[]): string[] => [...new Set(targets.map((t) => t.path ?? "/metrics"))];

function jobsOf(targets: readonly ScrapeTarget[], kind: ScrapeJobKind, paths = pathsOf(targets)): Job[] {
  if (kind === "deployed") {
    const { kubernetes_sd_configs: _discovery, job_name, ...job } = annotationScrapeJob({ namespaces: [] });
    return [
      { name: String(job_name), settings: { ...job, scrape_interval: "1s" }, groups: targets.map(discoveredPod) },
    ];
  }
  const unknown = pathsOf(targets).filter((p) => !paths.includes(p));
  if (unknown.length > 0) throw new Error(`no scrape job for the metrics path(s) ${unknown.join(", ")}`);
  return paths.map((path, i) => ({
    name: `job-${i}`,
    settings: { metrics_path: path },
    groups: targets
      .filter((t) => (t.path ?? "/metrics") === path)
      .map((t) => ({ targets: [t.address], labels: t.labels })),
  }));
}

/** Each job's discovery file in `dir`. */
const targetsFile = (dir: string, job: Job): string => join(dir, `${job.name}.targets.json`);

/** Writes a job's discovery file whole (renamed into place: Prometheus never reads half of it). */
function writeTargets(dir: string, job: Job): void {
  const file = targetsFile(dir, job);
  writeFileSync(`${file}.tmp`, JSON.stringify(job.groups));
  renameSync(`${file}.tmp`, file);
}

/** prometheus.yml: the jobs' targets from their files in `dir`, the rule file evaluated every second. */
function prometheusConfig(jobs: readonly Job[], ruleFile: string, dir: string): string {
  return stringify({
    global: { scrape_interval: "1s", scrape_timeout: "900ms", evaluation_interval: "1s" },
    rule_files: [ruleFile],
    scrape_configs: jobs.map((j) => ({
      job_name: j.name,
      ...j.settings,
      file_sd_configs: [{ files: [targetsFile(dir, j)], refresh_interval: "1s" }],
    })),
  });
}

/** Starts Prometheus with these targets and this rule file's text; resolves once it is ready. @default kind static */
export async function startPrometheus(
  targets: readonly ScrapeTarget[],
  rules: string,
  kind: ScrapeJobKind = "static",
): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "vbench-prometheus-"));
  const paths = pathsOf(targets);
  const jobs = jobsOf(targets, kind, paths);
  for (const job of jobs) writeTargets(dir, job);
  writeFileSync(join(dir, "rules.yaml"), rules);
  writeFileSync(join(dir, "prometheus.yml"), prometheusConfig(jobs, join(dir, "rules.yaml"), dir));
  const port = await freePort("127.0.0.1");
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ];
  const child = spawn(debianBinary("prometheus", "PROMETHEUS"), args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const unregister = runAtExit(() => child.kill("SIGKILL"));
  const stop = async (): Promise<void> => {
    unregister();
    await ended(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await pollUntil(
      async () =>
        (await ready(url)) || (child.exitCode !== null ? exitedEarly("prometheus", child, stderr) : "not ready"),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: "Prometheus to answer /-/ready",
      },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    alerts: () => alerts(url),
    targets: () => targetHealth(url),
    ruleEvaluations: () => ruleEvaluations(url),
    query: (q) => query(url, q),
    range: (q, fromMs, toMs, stepS) => range(url, q, fromMs, toMs, stepS),
    setTargets: (next) => {
      for (const job of jobsOf(next, kind, paths)) writeTargets(dir, job);
    },
    stop,
  };
}

async function ready(url: string): Promise<true | false> {
  return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
}

async function api<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`Prometheus ${path}: ${body.error ?? body.status}`);
  return body.data;
}

async function alerts(url: string): Promise<FiringAlert[]> {
  const data = await api<{ alerts: Array<{ labels: Record<string, string>; state: string; activeAt: string }> }>(
    url,
    "/api/v1/alerts",
  );
  return data.alerts.map((a) => ({
    name: a.labels.alertname ?? "?",
    state: a.state === "firing" ? "firing" : "pending",
    labels: a.labels,
    activeAt: a.activeAt,
  }));
}

async function ruleEvaluations(url: string): Promise<number[]> {
  const data = await api<{ groups: Array<{ lastEvaluation: string }> }>(url, "/api/v1/rules");
  return data.groups.map((g) => Date.parse(g.lastEvaluation));
}

async function targetHealth(url: string): Promise<Record<string, string>> {
  const data = await api<{ activeTargets: Array<{ scrapeUrl: string; health: string }> }>(url, "/api/v1/targets");
  return Object.fromEntries(data.activeTargets.map((t) => [new URL(t.scrapeUrl).host, t.health]));
}

async function range(
  url: string,
  expr: string,
  fromMs: number,
  toMs: number,
  stepS: number,
): Promise<Array<{ labels: Record<string, string>; values: [number, number][] }>> {
  const q = new URLSearchParams({
    query: expr,
    start: String(fromMs / 1000),
    end: String(toMs / 1000),
    step: String(stepS),
  });
  const data = await api<{ result: Array<{ metric: Record<string, string>; values: [number, string][] }> }>(
    url,
    `/api/v1/query_range?${q.toString()}`,
  );
  return data.result.map((r) => ({ labels: r.metric, values: r.values.map(([t, v]) => [t, Number(v)]) }));
}

async function query(url: string, expr: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const data = await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
    url,
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  return data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
}
