/**
 * The alert table of docs/metrics.md, generated from the alert definitions (alerts.ts) at the
 * embedded default stack's values and the default 15 s scrape interval, so it cannot drift:
 *
 *   npx tsx core/metrics/render-alert-table.ts           print the table
 *   npx tsx core/metrics/render-alert-table.ts --write   replace it in docs/metrics.md (between the markers only)
 *   npx tsx core/metrics/render-alert-table.ts --check   exit 1 when docs/metrics.md is stale
 */
import { parseStackConfig } from "../../config/schema.js";
import { replaceBetweenMarkers, runTableCli, type GeneratedTable } from "../../config/generated-table.js";
import { alertInputs, type AlertDefinition, type AlertInputs } from "./alert-definition.js";
import { ALERTS } from "./alerts.js";
import { holdSeconds } from "./rule-file.js";

export const ALERT_TABLE: GeneratedTable = {
  doc: "docs/metrics.md",
  start: "<!-- alerts:start -->",
  end: "<!-- alerts:end -->",
  script: "core/metrics/render-alert-table.ts",
  what: "alert table",
};

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function row(a: AlertDefinition, i: AlertInputs): string {
  const hold = holdSeconds(a, i);
  return `| \`${a.alert}\` | ${a.modes.join(", ")} | ${a.severity} | \`${cell(a.expr(i))}\` | ${hold > 0 ? `${hold} s` : "at once"} | ${cell(a.summary)} | ${cell(a.action)} |`;
}

/** The Markdown table, one row per alert, at the embedded default's values (each mode's own inputs). */
export function renderAlertTable(): string {
  const inputs = (mode: AlertInputs["mode"]) => alertInputs(parseStackConfig({ valkey: { mode } }).config.valkey);
  const rows = ALERTS.map((a) => row(a, inputs(a.modes[0] ?? "replication")));
  return [
    "| alert | modes | severity | fires when | held for | what it means | what to do |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Replaces the text between the markers; throws when they are missing or out of order. */
export function replaceAlertTable(doc: string, table: string): string {
  return replaceBetweenMarkers(ALERT_TABLE, doc, table);
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exit(runTableCli(ALERT_TABLE, renderAlertTable(), process.argv.slice(2)));
