/**
 * The stack's images working together on one machine, sharing one network namespace as a pod's
 * containers share localhost: Valkey in the stack's mode with a replica per primary (cluster mode:
 * three primaries over the 16384 slots; replication mode: a primary, a Sentinel, and HAProxy with
 * the program's own haproxy.cfg renderer in front), then, each in its own image: the exporter with
 * the members' arguments, scraped; the benchmark Job's pod as the program renders it (a small request
 * count), its log read by the program's own parser; the drill load's pod (the bundled load.mjs) for
 * a few seconds, its records read by the drill's parser. The servers run a minimal conf, not the
 * members' start scripts (those need the cluster's DNS and the pod's environment: the pods tier runs
 * them). The password reaches every container by variable name only (engine.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackConfig } from "../../config/types.js";
import { workloadFromConfig } from "../../config/schema.js";
import { buildBenchmarkJob } from "../../components/benchmark/job-manifest.js";
import { parseJobLog } from "../../components/benchmark/job-log.js";
import { zonesOnly } from "../../components/capacity/pod-inventory.js";
import { HAPROXY_CFG_DIR, HAPROXY_CFG_KEY, HAPROXY_COMMAND } from "../../components/valkey/haproxy-manifests.js";
import { buildDrillLoadJob } from "../../components/steps/failure-drill/load-job.js";
import { bundleLoadScript } from "../../core/drill/load-bundle.js";
import { parseRecordLines } from "../../core/drill/record-lines.js";
import { sleep } from "../../core/util/poll-until.js";
import { exporterDefinition } from "../../pod/exporter.js";
import { renderHaproxyCfg } from "../../pod/haproxy-cfg.js";
import { DEFAULT_MASTER_NAME } from "../../pod/replication-start.js";
import { DEFAULT_EXPORTER_PORT, SENTINEL_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import type { Engine, Ran, RunSpec } from "./engine.js";
import { podRunSpec, type PodRunInput, type RenderedPod } from "./pod-run.js";

/** The variables the engine's environment holds the check's throwaway password in. */
export const PASSWORD_VARS = ["VALKEY_PASSWORD", "REDIS_PASSWORD", "REDISCLI_AUTH", "VALKEYCLI_AUTH"] as const;

export interface LiveRow {
  check: string;
  image: string;
  ok: boolean;
  detail: string;
}

export interface LiveImages {
  valkey: string;
  haproxy?: string;
  node?: string;
  exporter?: string;
}

export interface LiveOptions {
  engine: Engine;
  config: StackConfig;
  /** What to run, by role: the pulled references. */
  images: LiveImages;
  /** A scratch directory for rendered files. */
  dir: string;
  /** Prefix of the containers' names (unique per run). */
  prefix: string;
  /** The check's throwaway password (also in the engine's environment, PASSWORD_VARS); undefined with auth off. */
  password: string | undefined;
  /** How long to wait for a server or endpoint to answer. @default 60000 */
  readyMs?: number;
}

/** The data server's port: replication mode puts HAProxy's write endpoint on 6379 in front of it. */
const dataPort = (c: StackConfig): number => (c.valkey.mode === "cluster" ? VALKEY_PORT : 6390);
const auth = (c: StackConfig): boolean => c.valkey.auth.enabled;
const authVars = (c: StackConfig): string[] => (auth(c) ? ["REDISCLI_AUTH", "VALKEYCLI_AUTH"] : []);
const tail = (r: Ran): string => `${r.stdout}${r.stderr}`.trim().split("\n").slice(-3).join(" | ");

/** A server conf on stdin: the password from the variable, never argv. */
function serverScript(lines: string[], c: StackConfig, sentinel = false): string {
  const secret = auth(c) ? ['requirepass "$VALKEY_PASSWORD"', 'masterauth "$VALKEY_PASSWORD"'] : [];
  const body = [...lines, ...(sentinel ? [] : secret)].map((l) => `echo ${l}`).join("; ");
  return sentinel
    ? `{ ${body}; } > /tmp/sentinel.conf && exec valkey-server /tmp/sentinel.conf --sentinel`
    : `{ ${body}; } | exec valkey-server -`;
}

class Live {
  readonly rows: LiveRow[] = [];
  readonly started: string[] = [];
  constructor(private readonly o: LiveOptions) {}

  get server(): string {
    return `${this.o.prefix}-valkey`;
  }

  start(part: string, spec: Omit<RunSpec, "name">): string {
    const name = `${this.o.prefix}-${part}`;
    const r = this.o.engine.run({
      ...spec,
      name,
      ...(part === "valkey" ? { isolated: true } : { joinNetworkOf: this.server }),
    });
    this.started.push(name); // removed at the end even when it failed to start (it may exist, created)
    if (r.status !== 0) throw new Error(`starting ${part} (${spec.image}): ${tail(r)}`);
    return name;
  }

  cli(port: number, args: string[]): Ran {
    return this.o.engine.exec(this.server, ["valkey-cli", "-p", String(port), ...args], authVars(this.o.config));
  }

  /** Asks until `ok`; else an error with the last answer and the log of `container` (what did not come up). */
  async until(
    what: string,
    port: number,
    args: string[],
    ok: (out: string) => boolean,
    container: string,
  ): Promise<void> {
    const deadline = Date.now() + (this.o.readyMs ?? 60_000);
    let last: Ran | undefined;
    while (Date.now() < deadline) {
      last = this.cli(port, args);
      if (last.status === 0 && ok(last.stdout)) return;
      await sleep(500);
    }
    const log = this.o.engine.logs(container).trim().split("\n").slice(-4).join(" | ");
    throw new Error(
      `${what} did not answer within ${(this.o.readyMs ?? 60_000) / 1000} s (last: ${last ? tail(last) : "-"}; its log: ${log})`,
    );
  }

  row(check: string, image: string, problem: string | undefined, detail: string): void {
    this.rows.push({ check, image, ok: problem === undefined, detail: problem ?? detail });
  }
}

/**
 * Cluster mode: three primaries (valkey-benchmark refuses a cluster of one node), each a third of
 * the slots, on 127.0.0.1:6379–6381, and a replica of each on 6382–6384; replication mode: a
 * primary on 6390 and its replica on 6391 (HAProxy's write endpoint takes 6379). Every writer's WAIT
 * then has its replica, as in the stack.
 */
export const CLUSTER_PORTS = [6379, 6380, 6381] as const;
const SLOT_RANGES = [
  ["0", "5460"],
  ["5461", "10922"],
  ["10923", "16383"],
] as const;
const replicaPort = (c: StackConfig, primary: number): number => primary + (c.valkey.mode === "cluster" ? 3 : 1);

function startOneServer(l: Live, o: LiveOptions, part: string, port: number): void {
  const c = o.config;
  const conf = [
    `port ${port}`,
    "bind 127.0.0.1",
    "dir /tmp",
    ...(c.valkey.mode === "cluster" ? ["cluster-enabled yes"] : []),
  ];
  l.start(part, {
    image: o.images.valkey,
    entrypoint: "sh",
    args: ["-c", serverScript(conf, c)],
    passEnv: auth(c) ? ["VALKEY_PASSWORD"] : [],
    user: "999:999",
    tmpfs: ["/tmp"],
  });
}

function must(r: Ran, what: string): string {
  if (r.status !== 0 || /^(ERR|-)/m.test(r.stdout)) throw new Error(`${what}: ${tail(r)}`);
  return r.stdout.trim();
}

function formCluster(l: Live, c: StackConfig): void {
  const all = CLUSTER_PORTS.flatMap((p) => [p, replicaPort(c, p)]);
  for (const port of all.slice(1)) must(l.cli(6379, ["cluster", "meet", "127.0.0.1", String(port)]), "CLUSTER MEET");
  CLUSTER_PORTS.forEach((port, i) =>
    must(l.cli(port, ["cluster", "addslotsrange", ...SLOT_RANGES[i]!]), "CLUSTER ADDSLOTSRANGE"),
  );
}

/** Each replica follows its primary (cluster: once it knows the primary's id from the gossip). */
async function attachReplicas(l: Live, c: StackConfig, primaries: readonly number[]): Promise<void> {
  for (const p of primaries) {
    const r = replicaPort(c, p);
    if (c.valkey.mode === "cluster") {
      const id = must(l.cli(p, ["cluster", "myid"]), "CLUSTER MYID");
      await l.until(`${r} learning ${p}`, r, ["cluster", "nodes"], (out) => out.includes(id), l.server);
      must(l.cli(r, ["cluster", "replicate", id]), "CLUSTER REPLICATE");
    } else must(l.cli(r, ["replicaof", "127.0.0.1", String(p)]), "REPLICAOF");
  }
  for (const p of primaries) {
    const linked = (out: string) => out.includes("master_link_status:up");
    await l.until(`the replica on ${replicaPort(c, p)}`, replicaPort(c, p), ["info", "replication"], linked, l.server);
  }
}

async function startServer(l: Live, o: LiveOptions): Promise<void> {
  const c = o.config;
  const primaries = c.valkey.mode === "cluster" ? [...CLUSTER_PORTS] : [dataPort(c)];
  const ports = primaries.flatMap((p) => [p, replicaPort(c, p)]);
  ports.forEach((port, i) => startOneServer(l, o, i === 0 ? "valkey" : `valkey-${i}`, port));
  for (const port of ports)
    await l.until(`valkey-server on ${port}`, port, ["ping"], (out) => out.includes("PONG"), l.server);
  if (c.valkey.mode === "cluster") formCluster(l, c);
  await attachReplicas(l, c, primaries);
  if (c.valkey.mode === "cluster")
    for (const port of ports)
      await l.until(
        `cluster_state:ok on ${port}`,
        port,
        ["cluster", "info"],
        (out) => out.includes("cluster_state:ok"),
        l.server,
      );
  l.row(
    "server",
    o.images.valkey,
    undefined,
    `${primaries.length === 1 ? "a primary and its replica" : `${primaries.length} primaries, a replica each`} on 127.0.0.1:${ports.join(", ")} (${c.valkey.mode} mode)`,
  );
}

async function startEndpoint(l: Live, o: LiveOptions, haproxy: string): Promise<void> {
  const c = o.config;
  const sentinel = [
    `port ${SENTINEL_PORT}`,
    "bind 127.0.0.1",
    "dir /tmp",
    `sentinel monitor ${DEFAULT_MASTER_NAME} 127.0.0.1 ${dataPort(c)} 1`,
    ...(auth(c)
      ? [
          `sentinel auth-pass ${DEFAULT_MASTER_NAME} "$VALKEY_PASSWORD"`,
          'requirepass "$VALKEY_PASSWORD"',
          'sentinel sentinel-pass "$VALKEY_PASSWORD"',
        ]
      : []),
  ];
  l.start("sentinel", {
    image: o.images.valkey,
    entrypoint: "sh",
    args: ["-c", serverScript(sentinel, c, true)],
    passEnv: auth(c) ? ["VALKEY_PASSWORD"] : [],
    user: "999:999",
    tmpfs: ["/tmp"],
  });
  // The password goes into the rendered file (as the stack's Secret holds it), mounted read-only.
  const cfg = renderHaproxyCfg({
    servers: [{ name: "valkey-0", host: "127.0.0.1", port: dataPort(c) }],
    sentinels: [{ name: "sentinel-0", host: "127.0.0.1", port: SENTINEL_PORT }],
    masterName: DEFAULT_MASTER_NAME,
    write: { host: "127.0.0.1", port: VALKEY_PORT },
    read: { host: "127.0.0.1", port: 6380 },
    status: { host: "127.0.0.1", port: 8404 },
    password: o.password,
    dnsResolve: false,
  });
  const file = join(o.dir, "haproxy-live.cfg");
  writeFileSync(file, cfg, { mode: 0o644 });
  const [entrypoint = "haproxy", ...args] = HAPROXY_COMMAND;
  const path = `${HAPROXY_CFG_DIR}/${HAPROXY_CFG_KEY}`;
  const proxy = l.start("haproxy", { image: haproxy, entrypoint, args, mounts: [{ host: file, path }] });
  const master = (out: string) => out.includes("role:master");
  await l.until("the write endpoint (HAProxy)", VALKEY_PORT, ["info", "replication"], master, proxy);
  l.row(
    "write endpoint",
    haproxy,
    undefined,
    "HAProxy passes the Sentinels' primary on 127.0.0.1:6379 (the program's haproxy.cfg)",
  );
}

/** `GET /metrics` from the pod's localhost, by bash's /dev/tcp in the Valkey image (Debian, as valkey/valkey is). */
const SCRAPE = `exec 3<>/dev/tcp/127.0.0.1/${DEFAULT_EXPORTER_PORT} && printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;

/** The exporter beside the server, as the member pod runs it, scraped from the pod's localhost. */
async function scrapeExporter(l: Live, o: LiveOptions, exporter: string): Promise<void> {
  const def = exporterDefinition({
    server: { host: "127.0.0.1", port: dataPort(o.config) },
    listen: { host: "127.0.0.1", port: DEFAULT_EXPORTER_PORT },
    auth: auth(o.config),
  });
  l.start("exporter", { image: exporter, args: def.args, passEnv: def.env });
  const deadline = Date.now() + (o.readyMs ?? 60_000);
  let r: Ran = { status: -1, stdout: "", stderr: "" };
  while (Date.now() < deadline) {
    r = o.engine.exec(l.server, ["bash", "-c", SCRAPE]);
    if (r.status === 0 && /^redis_up 1$/m.test(r.stdout)) break;
    await sleep(1000);
  }
  const families = new Set(
    r.stdout
      .split("\n")
      .filter((x) => x.startsWith("# TYPE "))
      .map((x) => x.split(" ")[2]),
  );
  const problem = /^redis_up 1$/m.test(r.stdout) ? undefined : `no "redis_up 1" in the scrape (${tail(r)})`;
  l.row("exporter scrape", exporter, problem, `redis_up 1, ${families.size} metric families`);
}

/** A Job's pod as the program renders it, run in the servers' network namespace (their localhost). */
function runJobPod(
  l: Live,
  o: LiveOptions,
  pod: RenderedPod,
  configMaps: PodRunInput["configMaps"],
  timeoutMs: number,
): Ran {
  return o.engine.run(podRunSpec({ pod, configMaps, dir: o.dir, joinNetworkOf: l.server }), timeoutMs);
}

function runBenchmark(l: Live, o: LiveOptions): void {
  const c = o.config;
  const workload = { ...workloadFromConfig(c), requests: 2000, minDurationSeconds: 0, repeat: 1 };
  const job = buildBenchmarkJob({
    namespace: c.valkey.namespace,
    name: "images-check",
    image: o.images.valkey,
    mode: c.valkey.mode,
    target: { host: "127.0.0.1", port: VALKEY_PORT },
    workload,
    secretName: auth(c) ? "check" : undefined,
    passwordKey: "password",
    placement: zonesOnly(c),
    resources: c.benchmark.resources,
    waitSeconds: 30,
  });
  const r = runJobPod(l, o, job.spec.template.spec as RenderedPod, {}, 300_000);
  let problem: string | undefined;
  let detail = "";
  try {
    const serverVersion = /(\d+\.\d+\.\d+)/.exec(o.images.valkey)?.[1] ?? "?";
    const rows = parseJobLog(r.stdout, { mode: c.valkey.mode, workload, serverVersion, timestamp: "00000000-000000" });
    detail = rows.map((x) => `${x.test} ${Math.round(x.rps)} rps`).join(", ");
  } catch (err) {
    problem = `the program's parser refused the Job's log: ${(err as Error).message} (${tail(r)})`;
  }
  l.row(
    "benchmark Job",
    o.images.valkey,
    problem,
    `the Job's script, ${workload.requests} requests per test (a smoke run, not a figure): ${detail}`,
  );
}

async function runDrillLoad(l: Live, o: LiveOptions, node: string): Promise<void> {
  const c = o.config;
  const loadS = 3;
  const { configMap, job } = buildDrillLoadJob({
    namespace: c.valkey.namespace,
    name: "images-check-load",
    runKey: "images-check",
    mode: c.valkey.mode,
    image: node,
    target: {
      host: "127.0.0.1",
      port: VALKEY_PORT,
      sentinel: { host: "127.0.0.1", port: SENTINEL_PORT, masterName: DEFAULT_MASTER_NAME },
    },
    rate: 50,
    loadS,
    keyPrefix: "images-check",
    secretName: auth(c) ? "check" : undefined,
    passwordKey: "password",
    placement: zonesOnly(c),
    script: await bundleLoadScript(),
  });
  const r = runJobPod(l, o, job.spec.template.spec, { [configMap.metadata.name]: configMap.data }, 120_000);
  let problem: string | undefined;
  let detail = "";
  try {
    const out = parseRecordLines(r.stdout);
    const acked = out.streams.map((s) => [s, out.records.filter((x) => x.stream === s && x.ok).length] as const);
    const failed = out.records.filter((x) => !x.ok).length;
    detail = `${loadS} s: ${acked.map(([s, n]) => `${s} ${n} acknowledged`).join(", ")}, ${failed} failed`;
    const silent = acked.filter(([, n]) => n === 0).map(([s]) => s);
    if (silent.length > 0 || failed > 0)
      problem = `${detail} (streams without an acknowledgement: ${silent.join(", ") || "none"})`;
  } catch (err) {
    problem = `the drill's parser refused the load's output: ${(err as Error).message} (${tail(r)})`;
  }
  l.row("drill load", node, problem, detail);
}

/** Runs the stack's images together; every container it started is removed before it returns. */
export async function runLiveStack(o: LiveOptions): Promise<LiveRow[]> {
  const l = new Live(o);
  const { config: c, images } = o;
  try {
    await startServer(l, o);
    if (images.exporter !== undefined) await scrapeExporter(l, o, images.exporter);
    // Replication mode's clients write through the endpoint: without a working HAProxy image there is none.
    const endpoint = c.valkey.mode === "cluster" || images.haproxy !== undefined;
    if (images.haproxy !== undefined && c.valkey.mode === "replication") await startEndpoint(l, o, images.haproxy);
    if (!endpoint) l.row("write endpoint", "-", "not run: the HAProxy image failed its own checks", "");
    if (endpoint && c.benchmark.enabled && c.benchmark.mix === undefined) runBenchmark(l, o);
    if (endpoint && images.node !== undefined) await runDrillLoad(l, o, images.node);
  } catch (err) {
    l.rows.push({ check: "live stack", image: "-", ok: false, detail: (err as Error).message });
  } finally {
    for (const name of l.started.reverse()) o.engine.remove(name);
  }
  return l.rows;
}
