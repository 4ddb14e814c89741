/**
 * The stack-config table of docs/configuration.md, generated from the schema's own metadata so it
 * cannot drift:
 *
 *   npx tsx config/render-table.ts           print the table
 *   npx tsx config/render-table.ts --write   replace it in docs/configuration.md (between the markers only)
 *   npx tsx config/render-table.ts --check   exit 1 when docs/configuration.md is stale
 */
import { replaceBetweenMarkers, runTableCli } from "./generated-table.js";
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

const GENERATED = {
  doc: TABLE_DOC,
  start: TABLE_START,
  end: TABLE_END,
  script: "config/render-table.ts",
  what: "config table",
};

/** Replaces the text between the markers; throws when they are missing or out of order. */
export function replaceConfigTable(doc: string, table: string): string {
  return replaceBetweenMarkers(GENERATED, doc, table);
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exit(runTableCli(GENERATED, renderConfigTable(), process.argv.slice(2)));
