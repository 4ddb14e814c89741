/**
 * The "live or rolled" table of docs/day-2.md, generated from CONF_DIRECTIVES (conf-directives.ts)
 * so it cannot drift:
 *
 *   npx tsx pod/render-directive-table.ts           print the table
 *   npx tsx pod/render-directive-table.ts --write   replace it in docs/day-2.md (between the markers only)
 *   npx tsx pod/render-directive-table.ts --check   exit 1 when docs/day-2.md is stale
 */
import { replaceBetweenMarkers, runTableCli } from "../config/generated-table.js";
import { CONF_DIRECTIVES, type DirectiveClass } from "./conf-directives.js";

export const DIRECTIVE_TABLE_START = "<!-- conf-directives:start -->";
export const DIRECTIVE_TABLE_END = "<!-- conf-directives:end -->";
/** The document holding the table, relative to the repository root. */
export const DIRECTIVE_TABLE_DOC = "docs/day-2.md";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const VALKEY_SAYS: Record<DirectiveClass["valkey"], string> = {
  "settable": "CONFIG SET takes it",
  "immutable": "CONFIG SET refuses it",
  "protected": "CONFIG SET refuses it",
  "not-a-config": "not a config",
};

/** The Markdown table: directive | how a change applies | what Valkey allows | why. LIVE rows first. */
export function renderDirectiveTable(): string {
  const rows = Object.entries(CONF_DIRECTIVES as Record<string, DirectiveClass>)
    .sort(([, a], [, b]) => (a.apply === b.apply ? 0 : a.apply === "live" ? -1 : 1))
    .map(
      ([key, c]) =>
        `| \`${key}\` | ${c.apply === "live" ? "live (`CONFIG SET`)" : "rolled (restart)"} | ${VALKEY_SAYS[c.valkey]} | ${cell(c.why)} |`,
    );
  return ["| directive | a change is | Valkey | why |", "|---|---|---|---|", ...rows].join("\n");
}

const GENERATED = {
  doc: DIRECTIVE_TABLE_DOC,
  start: DIRECTIVE_TABLE_START,
  end: DIRECTIVE_TABLE_END,
  script: "pod/render-directive-table.ts",
  what: "directive table",
};

/** Replaces the text between the markers; throws when they are missing or out of order. */
export function replaceDirectiveTable(doc: string, table: string): string {
  return replaceBetweenMarkers(GENERATED, doc, table);
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exit(runTableCli(GENERATED, renderDirectiveTable(), process.argv.slice(2)));
