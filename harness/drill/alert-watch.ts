/**
 * A drill's live metrics (`vbench drill --metrics`): a redis_exporter beside every member and
 * Sentinel (as the pods run one), HAProxy's own endpoint, and a real Prometheus scraping them every
 * second through the deployed scrape job with the mode's alert rules (core/metrics/) at the drill's
 * clocks. While the drill runs, `/api/v1/alerts` is sampled; the samples become the drill row's
 * `alerts` (core/drill/alerts-seen.ts).
 *
 * Exporters are pinned to the address a member had when the watch started; the cluster `all` fault
 * moves every member to a new address (as pods get new IPs, where each pod's own exporter follows),
 * so that fault's row would show every exporter down: the watch refuses it.
 */
import type { AlertInputs } from "../../core/metrics/alert-definition.js";
import { ruleFileText, ruleGroups } from "../../core/metrics/rule-file.js";
import type { AlertSnapshot } from "../../core/drill/alerts-seen.js";
import { LIVE_OPS_QUERY, liveMetricsOf, type LiveMetrics } from "../../core/drill/live-metrics.js";
import type { DrillTarget } from "../../core/drill/target.js";
import type { DrillMode, Fault } from "../../vocabulary/faults.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { startExporter } from "../metrics/exporter.js";
import { startPrometheus, type RunningPrometheus, type ScrapeTarget } from "../metrics/prometheus.js";

/** The labels the deployed scrape job would attach from the pods (namespace, release). */
const RELEASE = { namespace: "local", release: "drill" };
/** How often the alerts are sampled. */
const SAMPLE_MS = 500;

export interface AlertWatch {
  readonly snapshots: AlertSnapshot[];
  /** Samples until no alert of a severity other than `info` is pending or firing, or `timeoutMs` passed. */
  settle(timeoutMs: number): Promise<void>;
  /** Commands per second per member from `fromMs` to now (core/drill/live-metrics.ts), times from `faultAt`. */
  liveOps(fromMs: number, faultAt: number): Promise<LiveMetrics>;
  stop(): Promise<void>;
}

/** Why a drill of this mode and fault cannot watch alerts, or undefined. */
export function metricsUnsupported(mode: DrillMode, fault: Fault): string | undefined {
  if (mode === "cluster" && fault === "all")
    return "the cluster `all` fault moves every member to a new address; the local exporters stay on the old ones";
  return undefined;
}

/** Exporters, Prometheus with `inputs`' rules, every target up; then the sampling loop. */
export async function startAlertWatch(target: DrillTarget, inputs: AlertInputs): Promise<AlertWatch> {
  const spec = target.metricsEndpoints?.();
  if (spec === undefined) throw new Error(`the ${target.mode} target has no metrics endpoints`);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const targets: ScrapeTarget[] = [];
    for (const e of spec.endpoints) {
      const labels = { ...RELEASE, component: e.component, pod: e.pod };
      if (e.component === "haproxy") {
        targets.push({ address: `${e.host}:${e.port}`, path: e.path ?? "/metrics", labels });
        continue;
      }
      const x = await exporterTarget(e.host, e.port, spec.password, labels);
      stops.push(x.stop);
      targets.push(x.target);
    }
    const p = await prometheusWithRules(targets, inputs);
    stops.push(p.stop);
    return sampling(p, stopAll);
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** A redis_exporter beside host:port, as a scrape target with `labels` (the deployed job's). */
export async function exporterTarget(
  host: string,
  port: number,
  password: string | undefined,
  labels: Record<string, string>,
  listenHost?: string,
): Promise<{ target: ScrapeTarget; stop: () => Promise<void> }> {
  const x = await startExporter({ host, port, password, ...(listenHost === undefined ? {} : { listenHost }) });
  return { target: { address: new URL(x.url).host, labels }, stop: x.stop };
}

/**
 * A real Prometheus over `targets` through the deployed scrape job with `inputs`' rules, returned
 * once every target is up and every rule group was evaluated after that; stopped if that fails.
 */
export async function prometheusWithRules(targets: ScrapeTarget[], inputs: AlertInputs): Promise<RunningPrometheus> {
  const p = await startPrometheus(targets, ruleFileText(ruleGroups(inputs)), "deployed");
  try {
    await everyTargetUp(p, targets.length);
    return p;
  } catch (err) {
    await p.stop();
    throw err;
  }
}

/**
 * Every target up, then every rule group evaluated after that: until then an alert can be pending
 * from a moment when only some targets had been scraped (seen as ValkeyNoPrimary pending before
 * the primary's exporter was).
 */
async function everyTargetUp(p: RunningPrometheus, count: number): Promise<void> {
  await pollUntil(
    async () => {
      const health = await p.targets();
      const up = Object.values(health).filter((h) => h === "up").length;
      return up === count ? true : JSON.stringify(health);
    },
    { timeoutMs: 30_000, intervalMs: 500, what: `all ${count} metrics targets up in Prometheus` },
  );
  const upAt = Date.now();
  await pollUntil(
    async () => {
      const evaluated = await p.ruleEvaluations();
      return evaluated.length > 0 && evaluated.every((t) => t > upAt)
        ? true
        : `rule groups evaluated at ${evaluated.join(", ")}`;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "every rule group evaluated once all targets were up" },
  );
}

function sampling(p: RunningPrometheus, stopAll: () => Promise<void>): AlertWatch {
  const snapshots: AlertSnapshot[] = [];
  let stopped = false;
  let failure: Error | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        snapshots.push({ at: Date.now(), alerts: await p.alerts() });
      } catch (err) {
        failure = err as Error;
      }
      await sleep(SAMPLE_MS);
    }
  })();
  const active = (): number =>
    snapshots.at(-1)?.alerts.filter((a) => (a.labels.severity ?? "none") !== "info").length ?? 0;
  return {
    snapshots,
    settle: async (timeoutMs) => {
      const until = Date.now() + timeoutMs;
      // One sample taken after the call, then until nothing but info is active.
      const from = snapshots.length;
      while (Date.now() < until && (snapshots.length === from || active() > 0)) await sleep(SAMPLE_MS);
    },
    liveOps: async (fromMs, faultAt) => liveMetricsOf(await p.range(LIVE_OPS_QUERY, fromMs, Date.now(), 1), faultAt),
    stop: async () => {
      stopped = true;
      await loop;
      await stopAll();
      if (snapshots.length === 0 && failure !== undefined)
        throw new Error(`Prometheus's alerts could not be read: ${failure.message}`);
    },
  };
}
