/** The report's pure parts: escaping, chart data and specs, SVG rendering, sections and the page. */
import { describe, expect, it } from "vitest";
import { prefixSvgIds, renderChartSvg } from "../../benchmarks/report/chart-render.js";
import { latencyData, latencyChartSpec, rpsChartSpec, rpsData } from "../../benchmarks/report/chart-specs.js";
import { escapeHtml, html, jsonForScript, raw } from "../../benchmarks/report/html.js";
import { loadSource } from "../../benchmarks/report/load.js";
import { seriesOf, speedupPairs, type ReportInput, type ReportSource } from "../../benchmarks/report/model.js";
import { buildReportHtml } from "../../benchmarks/report/page.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { sideBySideTable } from "../../benchmarks/report/sections.js";
import { fixtureRows, LOCAL_RUN_DIR } from "../support/report-fixtures.js";

const local = (): ReportSource => loadSource(LOCAL_RUN_DIR);
const input = (...sources: ReportSource[]): ReportInput => ({
  title: "t",
  generatedAt: "2026-01-01T00:00:00Z",
  sources,
});
/** A source holding only one mode's rows, as a deployed stack's report does. */
const stackOf = (mode: "cluster" | "replication", label: string): ReportSource => ({
  ...local(),
  kind: "stack",
  label,
  rows: fixtureRows(mode),
  topology: [],
  machine: null,
});
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe("escaping", () => {
  it("escapes the five HTML-significant characters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });

  it("escapes interpolations but not literal markup, raw() or nested html``", () => {
    const evil = "<img src=x onerror=alert(1)>";
    const out =
      html`<td title="${evil}">${evil}${raw("<b>ok</b>")}${html`<i>${evil}</i>`}${[1, "<", null, undefined, false]}</td>`
        .value;
    expect(out).toBe(
      '<td title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;<b>ok</b><i>&lt;img src=x onerror=alert(1)&gt;</i>1&lt;</td>',
    );
  });

  it("keeps embedded JSON from closing its script element and still valid JSON", () => {
    const value = { note: "</script><script>alert(1)</script>", amp: "a&b", ls: "\u2028" };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/<\/script/i);
    expect(text).not.toContain("\u2028");
    expect(JSON.parse(text)).toEqual(value);
  });

  it("escapes hostile values from a results file everywhere on the page, charts included", async () => {
    const s = local();
    s.label = "run <i>";
    s.rows = s.rows.map((r) => ({
      ...r,
      test: r.test === "SET" ? "SET<b>&" : r.test,
      notes: "<script>alert(1)</script>",
    }));
    s.workload = { ...s.workload, name: '"><img src=x>' };
    const page = await renderReport([s], new Date("2026-01-01T00:00:00Z"));
    expect(page).not.toContain("<b>&");
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("<img");
    expect(page).not.toContain("<i>");
    expect(page).toContain("SET&lt;b&gt;&amp;");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});

describe("chart data and specs", () => {
  it("has one rps datum per mode × test, with the measured values", () => {
    const rows = fixtureRows();
    const data = rpsData(input(local()));
    expect(data).toHaveLength(6);
    for (const r of rows)
      expect(data).toContainEqual({ test: r.test, series: r.mode, rps: r.rps, min: r.rps, max: r.rps });
    const spec = rpsChartSpec(input(local())) as { data: { values: unknown[] }; encoding: { x: { sort: string[] } } };
    expect(spec.data.values).toEqual(data);
    expect(spec.encoding.x.sort).toEqual(["SET", "GET", "INCR"]);
  });

  it("has p50, p95 and p99 per mode × test", () => {
    const data = latencyData(input(local()));
    expect(data).toHaveLength(18);
    const set = fixtureRows("cluster").find((r) => r.test === "SET");
    expect(data.filter((d) => d.test === "SET" && d.series === "cluster")).toEqual([
      { test: "SET", series: "cluster", percentile: "p50", ms: set?.p50_ms, min: set?.p50_ms, max: set?.p50_ms },
      { test: "SET", series: "cluster", percentile: "p95", ms: set?.p95_ms, min: set?.p95_ms, max: set?.p95_ms },
      { test: "SET", series: "cluster", percentile: "p99", ms: set?.p99_ms, min: set?.p99_ms, max: set?.p99_ms },
    ]);
  });

  it("a figure of several runs: its median, and an error bar from its lowest to its highest run in both charts", async () => {
    const base = local();
    const spread = {
      ...base,
      rows: base.rows.map((r) => ({
        ...r,
        runs: 3,
        rps_min: r.rps - 10,
        rps_max: r.rps + 20,
        p99_min_ms: r.p99_ms / 2,
        p99_max_ms: r.p99_ms * 2,
      })),
    };
    const i = input(spread);
    const set = spread.rows.find((r) => r.mode === "cluster" && r.test === "SET")!;
    expect(rpsData(i)).toContainEqual({
      test: "SET",
      series: "cluster",
      rps: set.rps,
      min: set.rps - 10,
      max: set.rps + 20,
    });
    expect(latencyData(i)).toContainEqual({
      test: "SET",
      series: "cluster",
      percentile: "p99",
      ms: set.p99_ms,
      min: set.p99_ms / 2,
      max: set.p99_ms * 2,
    });
    const rps = await renderChartSvg("rps", rpsChartSpec(i));
    expect(count(rps, 'aria-roledescription="rule mark"')).toBe(rpsData(i).length);
    const latency = await renderChartSvg("latency", latencyChartSpec(i));
    expect(count(latency, 'aria-roledescription="rule mark"')).toBe(latencyData(i).length);
    // Each error bar is a vertical rule (x2 = 0) of a non-zero length (y2 = −(max − min) on the pixel scale).
    const rules = [...rps.matchAll(/aria-roledescription="rule mark"[^>]* x2="([^"]+)" y2="([^"]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(rules).toHaveLength(6);
    for (const [x2, y2] of rules) expect([x2, (y2 as number) < 0]).toEqual([0, true]);
  });

  it("the side-by-side table and All rows show each figure's median with its min–max, and mark a client-bound row", () => {
    const base = local();
    const rows = base.rows.map((r) => ({
      ...r,
      runs: 3,
      rps_min: 1000,
      rps_max: 2000,
      client_cpu_pct: 40,
      client_cores: 2,
      client_bound: false,
    }));
    const setCluster = rows.findIndex((r) => r.mode === "cluster" && r.test === "SET");
    rows[setCluster] = { ...rows[setCluster]!, client_cpu_pct: 97.5, client_bound: true };
    const table = sideBySideTable(input({ ...base, rows }))?.value ?? "";
    expect(count(table, '<span class="sub range">1,000–2,000</span>')).toBe(rows.length);
    expect(count(table, 'class="warn client-bound" title="CLIENT-BOUND: 97.5 % of 2 cores"')).toBe(1);
    const page = buildReportHtml(input({ ...base, rows }), new Map());
    expect(page).toContain("CLIENT-BOUND: 97.5 % of 2 cores</td>");
    expect(count(page, "40.0 % of 2 cores</td>")).toBe(rows.length - 1);
    expect(page).toContain("Every measurement ran 3 times, interleaved");
    expect(page).toContain("1 row(s) are marked client-bound");
  });

  it("names series by source when there is more than one source", () => {
    const data = rpsData(input(stackOf("replication", "stack a"), stackOf("cluster", "stack b")));
    expect([...new Set(data.map((d) => d.series))]).toEqual(["stack a · replication", "stack b · cluster"]);
  });

  it("renders one SVG bar per datum", async () => {
    const i = input(local());
    const rps = await renderChartSvg("rps", rpsChartSpec(i));
    expect(rps.startsWith("<svg")).toBe(true);
    expect(count(rps, 'aria-roledescription="bar"')).toBe(rpsData(i).length);
    const latency = await renderChartSvg("latency", latencyChartSpec(i));
    expect(count(latency, 'aria-roledescription="bar"')).toBe(latencyData(i).length);
  });

  it("prefixes the ids Vega generates (clip paths) with the chart's name", async () => {
    const svg = await renderChartSvg("clipped", {
      data: { values: [{ a: "x", b: 1 }] },
      mark: { type: "bar", clip: true },
      encoding: { x: { field: "a", type: "nominal" }, y: { field: "b", type: "quantitative" } },
    });
    const ids = [...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(id).toMatch(/^clipped-/);
    expect(svg).toContain(`url(#${ids[0]})`);
  });

  it("prefixes ids and only references to them", () => {
    const svg =
      '<svg><clipPath id="clip1"/><g clip-path="url(#clip1)"/><use href="#clip1"/><g fill="url(#elsewhere)"/></svg>';
    expect(prefixSvgIds(svg, "c-")).toBe(
      '<svg><clipPath id="c-clip1"/><g clip-path="url(#c-clip1)"/><use href="#c-clip1"/><g fill="url(#elsewhere)"/></svg>',
    );
  });
});

describe("what the speedup compares", () => {
  it("a source with both modes against itself; two single-mode sources against each other", () => {
    const one = speedupPairs(seriesOf(input(local())));
    expect(one.map((p) => [p.cluster.name, p.replication.name])).toEqual([["cluster", "replication"]]);
    const stacks = speedupPairs(seriesOf(input(stackOf("cluster", "c"), stackOf("replication", "r"))));
    expect(stacks.map((p) => p.label)).toEqual(["c vs r"]);
    const ambiguous = speedupPairs(
      seriesOf(input(stackOf("cluster", "c1"), stackOf("cluster", "c2"), stackOf("replication", "r"))),
    );
    expect(ambiguous).toEqual([]);
  });

  it("the table shows rps, p50, p99 per mode and the ratio computed from them", () => {
    const table = sideBySideTable(input(local()))?.value ?? "";
    const c = fixtureRows("cluster").find((r) => r.test === "INCR");
    const r = fixtureRows("replication").find((x) => x.test === "INCR");
    if (!c || !r) throw new Error("fixture lacks INCR");
    const row = /<tr data-test="INCR">.*<\/tr>/.exec(table)?.[0] ?? "";
    expect(row).toContain(`<td class="num">${c.p99_ms.toFixed(3)}</td>`);
    expect(row).toContain(`${(c.rps / r.rps).toFixed(2)}× rps`);
    expect(row).toContain(`${Math.round(r.rps).toLocaleString("en-US")}`);
  });
});

describe("the page", () => {
  const charts = new Map([["rps", { title: "R", caption: "c", svg: '<svg id="x"></svg>' }]]);

  it("is self-contained: no external resource, no executable script", () => {
    const page = buildReportHtml(input(local()), charts);
    expect(page).not.toMatch(/\ssrc=|<link\b|@import|url\(\s*['"]?https?:/i);
    expect([...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([
      '<script type="application/json" id="report-data">',
    ]);
  });

  it("shows a section only when its data is there", () => {
    const withData = buildReportHtml(input(local()), charts);
    for (const id of ["how-to-read", "side-by-side", "charts", "topology", "setup", "rows"])
      expect(withData).toContain(`<section id="${id}">`);
    const noTopology = buildReportHtml(input({ ...local(), topology: [] }), new Map());
    expect(noTopology).not.toContain('<section id="charts">');
    expect(noTopology).toContain("No verifier report recorded for: local-run");
    for (const later of ["drills", "sweep", "cost"]) expect(withData).not.toContain(`id="${later}"`);
  });

  it("says what local numbers cannot show only for local runs, and the one-client caveat only for stacks", () => {
    const localPage = buildReportHtml(input(local()), charts);
    expect(localPage).toContain("Local runs share one machine.");
    expect(localPage).toContain(`(${local().machine?.cpus} CPUs)`);
    expect(localPage).not.toContain("one client pod");
    const stackPage = buildReportHtml(input(stackOf("cluster", "stack cluster")), charts);
    expect(stackPage).not.toContain("Local runs share one machine.");
    expect(stackPage).toContain("Deployed stacks are measured by one client pod.");
    const mixed = buildReportHtml(input(local(), stackOf("cluster", "s")), charts);
    expect(mixed).toContain("Compare sources with care:");
  });
});

describe("settings in the workload card", () => {
  it("keep their fractions (a 0.3 s minimum duration is not shown as 0)", () => {
    const s = local();
    s.workload = { ...s.workload, minDurationSeconds: 0.3, keyspaceLength: 1_000_000 };
    const page = buildReportHtml(input(s), new Map());
    expect(page).toContain("<dt>Minimum test duration (s)</dt><dd>0.3</dd>");
    expect(page).toContain("<dt>Keyspace (-r)</dt><dd>1,000,000</dd>");
  });
});
