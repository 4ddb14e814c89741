/**
 * A Markdown table generated from code and kept in a doc between two markers, with its small CLI
 * (print / `--write` / `--check`): docs/configuration.md's config table (render-table.ts) and
 * docs/day-2.md's directive table (pod/render-directive-table.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface GeneratedTable {
  /** The doc's path from the repository root, e.g. "docs/configuration.md". */
  doc: string;
  start: string;
  end: string;
  /** The script that writes it, for the stale message. */
  script: string;
  /** What the table is, for the stale message ("config table"). */
  what: string;
}

/** Replaces the text between the markers; throws when they are missing or out of order. */
export function replaceBetweenMarkers(t: GeneratedTable, doc: string, table: string): string {
  const start = doc.indexOf(t.start);
  const end = doc.indexOf(t.end);
  if (start < 0 || end < start) throw new Error(`${t.doc} must contain ${t.start} followed by ${t.end}`);
  return `${doc.slice(0, start + t.start.length)}\n${table}\n${doc.slice(end)}`;
}

/** The CLI: no flag prints the table, `--write` puts it in the doc, `--check` exits 1 when the doc is stale. */
export function runTableCli(t: GeneratedTable, table: string, args: readonly string[]): number {
  if (!args.includes("--write") && !args.includes("--check")) {
    process.stdout.write(`${table}\n`);
    return 0;
  }
  const docPath = join(dirname(fileURLToPath(import.meta.url)), "..", t.doc);
  const doc = readFileSync(docPath, "utf8");
  const updated = replaceBetweenMarkers(t, doc, table);
  if (args.includes("--check")) {
    if (updated === doc) return 0;
    process.stderr.write(`${t.doc}'s ${t.what} is stale; run: npx tsx ${t.script} --write\n`);
    return 1;
  }
  if (updated !== doc) writeFileSync(docPath, updated);
  return 0;
}
