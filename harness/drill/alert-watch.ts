/**
 * A drill's live metrics (`vbench drill --metrics`): a redis_exporter beside every member and
 * Sentinel (as the pods run one), HAProxy's own endpoint, and a real Prometheus scraping them every
 * second through the deployed scrape job with the mode's alert rules (core/metrics/) at the drill's
 * clocks. While the drill runs, `/api/v1/alerts` is sampled; the samples become the drill row's
 * `alerts` (core/drill/alerts-seen.ts).
 *
 * The exporters follow the members: the cluster `all` fault moves every member to a new address, as pods get new IPs;
 * each sample first asks the target where its members run, and a member found at a new address gets a new exporter
 * there and the old one is stopped and its target removed (Prometheus marks its series stale), as a recreated pod
 * brings its own exporter and Kubernetes discovery drops the deleted one's.
 */
import type { AlertInputs } from "../../core/metrics/alert-definition.js";
import { ruleFileText, ruleGroups } from "../../core/metrics/rule-file.js";
import type { AlertSnapshot } from "../../core/drill/alerts-seen.js";
import { LIVE_OPS_QUERY, liveMetricsOf, type LiveMetrics } from "../../core/drill/live-metrics.js";
import type { DrillTarget, MetricsEndpoint } from "../../core/drill/target.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { startExporter } from "../metrics/exporter.js";
import { startPrometheus, type RunningPrometheus, type ScrapeTarget } from "../metrics/prometheus.js";

/** The labels the deployed scrape job would attach from the pods (namespace, release). */
const RELEASE = { namespace: "local", release: "drill" };
/** How often the alerts are sampled. */
const SAMPLE_MS = 500;

export interface AlertWatch {
  readonly snapshots: AlertSnapshot[];
  /**
   * Samples until Prometheus scrapes every current target (members at new addresses included: its discovery applies a
   * changed target set only every 5 s) and evaluated the rules after that, then until no alert of a severity other
   * than `info` is pending or firing; or until `timeoutMs` passed.
   */
  settle(timeoutMs: number): Promise<void>;
  /** Commands per second per member from `fromMs` to now (core/drill/live-metrics.ts), times from `faultAt`. */
  liveOps(fromMs: number, faultAt: number): Promise<LiveMetrics>;
  stop(): Promise<void>;
}

/** One scraped endpoint: where its server runs, its scrape target, and its exporter's stop (HAProxy: none). */
interface Scraped {
  where: string;
  target: ScrapeTarget;
  stop?: () => Promise<void>;
}

const keyOf = (e: MetricsEndpoint): string => `${e.component}/${e.pod}`;
const whereOf = (e: MetricsEndpoint): string => `${e.host}:${e.port}`;

/** The exporters beside a target's members, following them to new addresses (`follow`). */
class Exporters {
  private readonly scraped = new Map<string, Scraped>();
  constructor(private readonly password: string | undefined) {}

  /**
   * Exporters for `endpoints`: a new one, started beside the others at once, for each endpoint not scraped at that
   * address yet, and the one it replaces stopped; true when any target changed.
   */
  async follow(endpoints: readonly MetricsEndpoint[], waitUp: boolean): Promise<boolean> {
    const moved = endpoints.filter((e) => !this.isCurrent(e));
    const started = await Promise.allSettled(moved.map((e) => this.scrape(e, waitUp)));
    for (const [i, e] of moved.entries()) {
      const r = started[i];
      if (r?.status !== "fulfilled") continue;
      const was = this.scraped.get(keyOf(e));
      this.scraped.set(keyOf(e), r.value);
      await was?.stop?.();
    }
    const failed = started.find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
    return moved.length > 0;
  }

  /** Whether every endpoint is scraped where it runs now. */
  follows = (endpoints: readonly MetricsEndpoint[]): boolean => endpoints.every((e) => this.isCurrent(e));

  /** Whether `e` is scraped where it runs now. */
  private isCurrent = (e: MetricsEndpoint): boolean => this.scraped.get(keyOf(e))?.where === whereOf(e);

  /** The exporters' own addresses (HAProxy's endpoint has none). */
  exporterAddresses = (): string[] =>
    [...this.scraped.values()].filter((x) => x.stop !== undefined).map((x) => x.target.address);

  targets = (): ScrapeTarget[] => [...this.scraped.values()].map((x) => x.target);

  async stop(): Promise<void> {
    for (const x of this.scraped.values()) await x.stop?.();
    this.scraped.clear();
  }

  private async scrape(e: MetricsEndpoint, waitUp: boolean): Promise<Scraped> {
    const where = whereOf(e);
    const labels = { ...RELEASE, component: e.component, pod: e.pod };
    if (e.component === "haproxy") return { where, target: { address: where, path: e.path ?? "/metrics", labels } };
    const x = await exporterTarget(e.host, e.port, this.password, labels, undefined, waitUp);
    return { where, target: x.target, stop: x.stop };
  }
}

/** Exporters, Prometheus with `inputs`' rules, every target up; then the sampling loop, following moved members. */
export async function startAlertWatch(target: DrillTarget, inputs: AlertInputs): Promise<AlertWatch> {
  const where = () => {
    const spec = target.metricsEndpoints?.();
    if (spec === undefined) throw new Error(`the ${target.mode} target has no metrics endpoints`);
    return spec;
  };
  const exporters = new Exporters(where().password);
  let p: RunningPrometheus | undefined;
  const stopAll = async (): Promise<void> => {
    await p?.stop();
    await exporters.stop();
  };
  try {
    await exporters.follow(where().endpoints, true);
    p = await prometheusWithRules(exporters.targets(), inputs);
    const running = p;
    const follow = async (): Promise<void> => {
      if (await exporters.follow(where().endpoints, false)) running.setTargets(exporters.targets());
    };
    // Every endpoint followed, Prometheus scraping exactly those targets, and every exporter's server answering it.
    const scraped = async (): Promise<boolean> => {
      if (!exporters.follows(where().endpoints)) return false;
      const health = await running.targets();
      const current = exporters.targets().map((t) => t.address);
      if (current.length !== Object.keys(health).length || !current.every((a) => health[a] === "up")) return false;
      const up = new Map((await running.query("redis_up")).map((x) => [x.labels.instance, x.value]));
      return exporters.exporterAddresses().every((a) => up.get(a) === 1);
    };
    return sampling(running, { follow, scraped, stepMs: inputs.scrapeIntervalSeconds * 1000 }, stopAll);
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
  waitUp = true,
): Promise<{ target: ScrapeTarget; stop: () => Promise<void> }> {
  const x = await startExporter({
    host,
    port,
    password,
    waitUp,
    ...(listenHost === undefined ? {} : { listenHost }),
  });
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

/** Every rule group evaluated after `ms`. */
async function evaluatedSince(p: RunningPrometheus, ms: number): Promise<boolean> {
  const evaluated = await p.ruleEvaluations().catch(() => []);
  return evaluated.length > 0 && evaluated.every((t) => t > ms);
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

/** What the sampling loop asks of the exporters: follow the members; whether Prometheus scrapes each one now. */
interface Following {
  follow: () => Promise<void>;
  scraped: () => Promise<boolean>;
  /**
   * The rules' subquery step (their scrape interval): a subquery's steps fall on whole multiples of it, so an
   * evaluation sees a sample only from the step after it was scraped.
   */
  stepMs: number;
}

function sampling(
  p: RunningPrometheus,
  { follow, scraped, stepMs }: Following,
  stopAll: () => Promise<void>,
): AlertWatch {
  const snapshots: AlertSnapshot[] = [];
  let stopped = false;
  let failure: Error | undefined;
  let lost: Error | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        await follow();
      } catch (err) {
        lost ??= err as Error;
      }
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
      while (Date.now() < until && !(await scraped().catch(() => false))) await sleep(SAMPLE_MS);
      // Evaluated a step after every target was scraped: the first evaluation after it could read a subquery whose
      // last step is before that scrape (ValkeyEveryMemberRestarted missed one run in three, the machine idle).
      const seenFrom = Date.now() + stepMs;
      while (Date.now() < until && !(await evaluatedSince(p, seenFrom))) await sleep(SAMPLE_MS / 2);
      // One sample taken after that, then until nothing but info is active.
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
      if (lost !== undefined)
        throw new Error(`an exporter could not follow its member to its new address: ${lost.message}`);
    },
  };
}
