/**
 * The report's cost section: two deployed stacks' reports (cluster and replication, with the
 * cost the program attaches) loaded as `vbench report --from` would, shown side by side per
 * test; a local run (no cost columns) renders no cost section.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stackCost, withCostColumns } from "../../benchmarks/cost/cost-model.js";
import { loadPriceTable } from "../../benchmarks/cost/prices.js";
import { loadSource } from "../../benchmarks/report/load.js";
import { buildReportHtml } from "../../benchmarks/report/page.js";
import { renderResultsCsv } from "../../benchmarks/run/results-csv.js";
import { loadStackFile } from "../../config/schema.js";
import type { StackReport } from "../../stacks/outputs.js";
import { costInputsFromConfig } from "../../stacks/cost.js";
import { fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "vbench-cost-report-"));

/** The fixture stack report with the cost the program would attach in us-east-1 (table prices). */
function costedReport(mode: "cluster" | "replication"): StackReport {
  const base = fixtureStackReport(mode);
  const { config } = loadStackFile(`stacks/Pulumi.${mode}.yaml`);
  const east = {
    ...config,
    aws: { ...config.aws, region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1c"] },
  };
  const cost = stackCost(costInputsFromConfig(east, 1), loadPriceTable());
  const rows = withCostColumns(base.benchmark?.rows ?? [], cost.usdPerHour);
  return { ...base, benchmark: { rows, csv: renderResultsCsv(rows) }, cost };
}

const page = (...paths: string[]) =>
  buildReportHtml(
    { title: "t", generatedAt: "2026-01-01T00:00:00Z", sources: paths.map((p) => loadSource(p)) },
    new Map(),
  );

describe("cost per topology in report.html", () => {
  it("shows each stack's USD/h and USD per 1M ops/s side by side per test, and each estimate with its price source", () => {
    const cluster = costedReport("cluster");
    const replication = costedReport("replication");
    expect(cluster.cost?.usdPerHour).toBeGreaterThan(replication.cost?.usdPerHour ?? Infinity); // 6 Valkey nodes vs 4
    const html = page(writeJson(dir, "cluster.json", cluster), writeJson(dir, "replication.json", replication));
    const section = html.slice(
      html.indexOf('<section id="cost">'),
      html.indexOf("</section>", html.indexOf('<section id="cost">')),
    );
    expect(section).toContain('data-series="stack cluster · cluster"');
    expect(section).toContain('data-series="stack replication · replication"');
    const set = cluster.benchmark?.rows.find((r) => r.test === "SET");
    expect(section).toContain(`$${(cluster.cost?.usdPerHour ?? 0).toFixed(4)}`);
    expect(section).toContain(`$${(set?.usd_per_million_ops_per_s ?? 0).toFixed(2)}`);
    expect(section).toContain("EC2 prices from the price table");
    expect(section).toContain("Valkey nodes (r7g.large)");
    expect(section).toContain("karpenter-generated-us-east-1");
  });

  it("a missing price shows as missing with its reason (us-west-2 has no table prices)", () => {
    const base = fixtureStackReport("cluster");
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    const cost = stackCost(costInputsFromConfig(config, 1), loadPriceTable());
    const rows = withCostColumns(base.benchmark?.rows ?? [], cost.usdPerHour);
    const html = page(writeJson(dir, "west.json", { ...base, benchmark: { rows, csv: renderResultsCsv(rows) }, cost }));
    expect(html).toContain('<section id="cost">');
    expect(html).toContain("missing: r7g.large in us-west-2: no stored source gave the us-west-2 on-demand price");
    // The stack's total and the per-row columns read "—" (missing), never a $0 or partial sum.
    expect(cost.usdPerHour).toBeNull();
    expect(html).toContain("<p>— per hour · Valkey nodes: r7g.large");
    expect(html).not.toMatch(/\$0\.0+(?![0-9])/);
  });

  it("a local run has no cost columns and no cost section", () => {
    const html = page(LOCAL_RUN_DIR);
    expect(html).not.toContain('id="cost"');
    expect(html).toContain('id="side-by-side"');
  });
});
