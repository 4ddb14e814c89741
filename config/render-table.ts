/**
 * The stack-config table of docs/configuration.md, generated from the schema's own metadata so it
 * cannot drift:
 *
 *   npx tsx config/render-table.ts           print the table
 *   npx tsx config/render-table.ts --write   replace it in docs/configuration.md (between the markers only)
 *   npx tsx config/render-table.ts --check   exit 1 when docs/configuration.md is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeKeys } from "./meta.js";
import { PROJECT, stackInputSchema } from "./sections.js";

export const TABLE_START = "<!-- config-table:start -->";
export const TABLE_END = "<!-- config-table:end -->";
/** The document holding the table, relative to the repository root. */
export const TABLE_DOC = "docs/configuration.md";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (text: string) => (text === "—" ? text : `\`${text}\``);

/** The Markdown table of every stack key: key path | type | default | description. */
export function renderConfigTable(): string {
  const rows = describeKeys(stackInputSchema).map((key) => {
    const name = key.path.includes(":") ? key.path : `${PROJECT}:${key.path}`;
    return `| ${cell(code(name))} | ${cell(key.type)} | ${cell(key.defaultIsValue ? code(key.default) : key.default)} | ${cell(key.description)} |`;
  });
  const intro = `Keys of \`stacks/Pulumi.<stack>.yaml\` (\`config:\`). Nested keys live inside their section's map, e.g. \`${PROJECT}:valkey: { mode: cluster, cluster: { primaries: 3 } }\`; unknown keys are errors. Validate with \`npm run --silent vbench -- config --file stacks/Pulumi.<stack>.yaml\`.`;
  return [intro, "", "| Key | Type | Default | Description |", "|---|---|---|---|", ...rows].join("\n");
}

/** Replaces the text between the markers; throws when they are missing or out of order. */
export function replaceConfigTable(doc: string, table: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${TABLE_DOC} must contain ${TABLE_START} followed by ${TABLE_END}`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${table}\n${doc.slice(end)}`;
}

function run(args: string[]): number {
  const docPath = join(dirname(fileURLToPath(import.meta.url)), "..", TABLE_DOC);
  const table = renderConfigTable();
  if (!args.includes("--write") && !args.includes("--check")) {
    process.stdout.write(`${table}\n`);
    return 0;
  }
  const doc = readFileSync(docPath, "utf8");
  const updated = replaceConfigTable(doc, table);
  if (args.includes("--check")) {
    if (updated === doc) return 0;
    process.stderr.write(`${TABLE_DOC}'s config table is stale; run: npx tsx config/render-table.ts --write\n`);
    return 1;
  }
  if (updated !== doc) writeFileSync(docPath, updated);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(run(process.argv.slice(2)));
