/**
 * `vbench report --prometheus FILE`: a run's figures as Prometheus metrics. The file a user would
 * hand to node_exporter's textfile collector is checked three ways: `promtool check metrics` (the
 * exposition format's own linter), a real Prometheus (Debian's 2.42) scraping it and answering
 * queries with the rows' own numbers, and the values against results.csv. `--pushgateway URL`
 * pushes the same to a real Pushgateway (Debian's 1.5), which then serves the rows' numbers. Plus
 * the refusals: two rows of one source with the same identity, a file that cannot be written, a
 * URL that is not one, a Pushgateway nobody runs.
 */
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseResultsCsv } from "../../benchmarks/run/results-csv.js";
import { loadSources } from "../../benchmarks/report/load.js";
import { prometheusExposition } from "../../benchmarks/report/prometheus-export.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { startPrometheus, type RunningPrometheus } from "../../harness/metrics/prometheus.js";
import { debianBinary, ended } from "../../harness/metrics/process.js";
import { freePort } from "../../harness/local/ports.js";
import { LOCAL_RUN_DIR } from "../support/report-fixtures.js";
import { runVbench } from "../support/verify-helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-report-prom-"));
let server: Server | undefined;
let prometheus: RunningPrometheus | undefined;
let pushgateway: ReturnType<typeof spawn> | undefined;
afterAll(async () => {
  if (pushgateway !== undefined) await ended(pushgateway);
  await prometheus?.stop();
  server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The fixture run with two drills and a workload name that needs escaping. */
function runDir(): string {
  const dir = join(scratch, "20260101-000000");
  cpSync(LOCAL_RUN_DIR, dir, { recursive: true });
  const csv = readFileSync(join(dir, "results.csv"), "utf8").replaceAll("\nfixture,", '\n"fix ""q"" \\ture",');
  writeFileSync(join(dir, "results.csv"), csv);
  const drill = (fault: string, outage: number) => ({
    mode: "replication",
    fault,
    ok: true,
    healed: true,
    faultDescription: "SIGKILL the primary",
    writeOutageMs: outage,
    recoveryMs: 7000,
    detectionMs: 5100,
    writes: 100,
    failedWrites: 10,
    ackedWrites: 90,
    lostAckedWrites: 0,
    waitedWrites: 80,
    lostWaitedWrites: 0,
    unexpectedReplies: 0,
    p99MsBefore: 1,
    p99MsDuring: 5,
    maxMsDuring: 9,
    timeline: [],
  });
  mkdirSync(join(dir, "raw"), { recursive: true });
  writeFileSync(join(dir, "raw", "drill-replication-primary.json"), JSON.stringify(drill("primary", 6300)));
  writeFileSync(join(dir, "raw", "drill-replication-switchover.json"), JSON.stringify(drill("switchover", 1400)));
  return dir;
}

describe("vbench report --prometheus", () => {
  it("writes the rows and drills as metrics that promtool accepts and a real Prometheus serves back with the rows' numbers", async () => {
    const dir = runDir();
    const file = join(scratch, "vbench.prom");
    const r = await runVbench(["report", "--from", dir, "--prometheus", file, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, prometheus: file });
    const text = readFileSync(file, "utf8");
    const lint = execFileSync(debianBinary("promtool", "PROMTOOL"), ["check", "metrics"], {
      input: text,
      encoding: "utf8",
      stdio: "pipe",
    });
    expect(lint).toBe("");

    const rows = parseResultsCsv(readFileSync(join(dir, "results.csv"), "utf8"));
    expect(rows[0]?.workload).toBe('fix "q" \\ture');
    server = createServer((_, res) => res.end(text)).listen(0, "127.0.0.1");
    await new Promise((resolve) => server?.once("listening", resolve));
    const port = (server.address() as { port: number }).port;
    prometheus = await startPrometheus(
      [{ address: `127.0.0.1:${port}`, labels: { job_source: "file" } }],
      "groups: []\n",
    );
    const p = prometheus;
    await pollUntil(
      async () => ((await p.query("vbench_throughput_ops_per_second")).length > 0 ? true : "no sample yet"),
      {
        timeoutMs: 30_000,
        intervalMs: 500,
        what: "Prometheus to scrape the exported file",
      },
    );
    const throughput = await p.query("vbench_throughput_ops_per_second");
    expect(throughput).toHaveLength(rows.length);
    for (const row of rows) {
      const sample = throughput.find((s) => s.labels.mode === row.mode && s.labels.test === row.test);
      expect(sample?.labels.workload).toBe(row.workload);
      expect(sample?.value).toBe(row.rps);
    }
    const p99 = await p.query('vbench_latency_seconds{percentile="99",mode="replication",test="SET"}');
    const set = rows.find((x) => x.mode === "replication" && x.test === "SET");
    expect(p99[0]?.value).toBeCloseTo((set?.p99_ms ?? NaN) / 1000, 9);
    const outages = await p.query('vbench_drill_write_outage_seconds{mode="replication"}');
    expect(outages.map((s) => [s.labels.fault, s.labels.run, s.value]).sort()).toEqual([
      ["primary", "1", 6.3],
      ["switchover", "1", 1.4],
    ]);
  }, 120_000);

  it("--pushgateway puts the same metrics in a real Pushgateway, which serves the rows' numbers under job=vbench", async () => {
    const dir = runDir();
    const port = await freePort("127.0.0.1");
    pushgateway = spawn(
      debianBinary("prometheus-pushgateway", "PUSHGATEWAY"),
      [`--web.listen-address=127.0.0.1:${port}`],
      {
        stdio: "ignore",
        cwd: scratch,
      },
    );
    const base = `http://127.0.0.1:${port}`;
    await pollUntil(async () => ((await fetch(`${base}/-/ready`).catch(() => undefined))?.ok ? true : "not ready"), {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: "the Pushgateway to answer /-/ready",
    });
    const r = await runVbench(["report", "--from", dir, "--pushgateway", `${base}/`, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, pushed: `${base}/metrics/job/vbench` });
    const served = await (await fetch(`${base}/metrics`)).text();
    const rows = parseResultsCsv(readFileSync(join(dir, "results.csv"), "utf8"));
    for (const row of rows) {
      const line = served
        .split("\n")
        .find(
          (l) =>
            l.startsWith("vbench_throughput_ops_per_second{") &&
            l.includes(`mode="${row.mode}"`) &&
            l.includes(`test="${row.test}"`),
        );
      expect(line, `${row.mode} ${row.test}`).toContain('job="vbench"');
      expect(Number(line?.split(" ").at(-1))).toBe(row.rps);
    }
  }, 60_000);

  it("--pushgateway refuses what is not a URL before writing anything, and names a Pushgateway it cannot reach", async () => {
    const out = join(scratch, "never");
    const notUrl = await runVbench([
      "report",
      "--from",
      LOCAL_RUN_DIR,
      "--output",
      out,
      "--pushgateway",
      "pushgateway:9091",
    ]);
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toContain("--pushgateway pushgateway:9091: must be http:// or https://");
    expect(existsSync(out)).toBe(false);
    const port = await freePort("127.0.0.1");
    const nobody = await runVbench([
      "report",
      "--from",
      LOCAL_RUN_DIR,
      "--output",
      join(scratch, "out2"),
      "--pushgateway",
      `http://127.0.0.1:${port}`,
    ]);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain(`--pushgateway http://127.0.0.1:${port}: cannot reach it`);
    for (const x of [notUrl, nobody]) expect(x.stderr).not.toMatch(/^\s+at /m);
  });

  it("refuses two rows of one source with the same identity, naming the series", () => {
    const [source] = loadSources([LOCAL_RUN_DIR]);
    if (source === undefined) throw new Error("no fixture source");
    const twice = { ...source, rows: [source.rows[0]!, source.rows[0]!] };
    expect(() => prometheusExposition([twice])).toThrow(/vbench_throughput_ops_per_second\{source=.*\} twice/);
  });

  it("exits 2 naming the file it cannot write, with no stack trace", async () => {
    const bad = join(scratch, "no-such-dir", "vbench.prom");
    const r = await runVbench([
      "report",
      "--from",
      LOCAL_RUN_DIR,
      "--output",
      join(scratch, "out"),
      "--prometheus",
      bad,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--prometheus ${bad}: cannot write it`);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
