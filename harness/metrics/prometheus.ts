/**
 * A real Prometheus on this machine (Debian's 2.42, the package that also brings promtool; or the
 * binary `$PROMETHEUS` names): it scrapes the given targets every second with the labels the
 * deployed scrape configuration will attach (core/metrics/targets.ts), evaluates the given rule
 * file every second, and answers the HTTP API. Its TSDB lives in a temporary directory removed on
 * stop.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { pollUntil } from "../../core/util/poll-until.js";
import { runAtExit } from "../../core/util/process-reaper.js";
import { freePort } from "../local/ports.js";
import { debianBinary, ended, exitedEarly } from "./process.js";

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
  /** An instant query's vector: each sample's labels and value. */
  query: (expr: string) => Promise<Array<{ labels: Record<string, string>; value: number }>>;
  stop: () => Promise<void>;
}

/** prometheus.yml: one job per metrics path, every target with its labels, scraped and evaluated every second. */
export function prometheusConfig(targets: readonly ScrapeTarget[], ruleFile: string): string {
  const paths = [...new Set(targets.map((t) => t.path ?? "/metrics"))];
  return stringify({
    global: { scrape_interval: "1s", scrape_timeout: "900ms", evaluation_interval: "1s" },
    rule_files: [ruleFile],
    scrape_configs: paths.map((path, i) => ({
      job_name: `job-${i}`,
      metrics_path: path,
      static_configs: targets
        .filter((t) => (t.path ?? "/metrics") === path)
        .map((t) => ({ targets: [t.address], labels: t.labels })),
    })),
  });
}

/** Starts Prometheus with these targets and this rule file's text; resolves once it is ready. */
export async function startPrometheus(targets: readonly ScrapeTarget[], rules: string): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "vbench-prometheus-"));
  writeFileSync(join(dir, "rules.yaml"), rules);
  writeFileSync(join(dir, "prometheus.yml"), prometheusConfig(targets, join(dir, "rules.yaml")));
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
  return { url, alerts: () => alerts(url), targets: () => targetHealth(url), query: (q) => query(url, q), stop };
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

async function targetHealth(url: string): Promise<Record<string, string>> {
  const data = await api<{ activeTargets: Array<{ scrapeUrl: string; health: string }> }>(url, "/api/v1/targets");
  return Object.fromEntries(data.activeTargets.map((t) => [new URL(t.scrapeUrl).host, t.health]));
}

async function query(url: string, expr: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const data = await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
    url,
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  return data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
}
