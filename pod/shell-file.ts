/**
 * Pod scripts kept as real shell files (pod/scripts/*.sh), read at render time. A file is plain
 * POSIX sh; what varies per release or process comes in through two markers, nothing else:
 *
 * - `# @values a b c` (one line): replaced by `a=…`, `b=…`, `c=…` (sh-quoted) from the values the
 *   renderer passes. The renderer must pass exactly the declared names: a missing or an extra one
 *   is refused, naming it, so no script runs with a value left unset or one it never reads.
 * - `# @include lib.sh`: replaced by that file's lines after its own header comment (shared
 *   functions, e.g. the bounded valkey-cli call of lib-cli.sh).
 *
 * shellcheck runs on both the files and their renders (tests/support/shellcheck-pod-scripts.ts).
 * In a file the `# @values` names look unassigned, so a file waives SC2154 on one line starting
 * `# shellcheck disable=SC2154`; the render drops that line, so in the script a pod runs an
 * unassigned variable is still found.
 *
 * The environment a script reads (POD_NAME, VALKEY_ANNOUNCE_HOST, …) stays in the pod's env list
 * (pod/definition.ts); the values here are the release's, so a ConfigMap updated in place hands a
 * running pod its new scripts and their values together.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { shQuote } from "./sh-cli.js";

/** The directory of the pods' shell files. */
export const SHELL_DIR = fileURLToPath(new URL("./scripts/", import.meta.url));

const cache = new Map<string, string>();
/** A file's waiver of SC2154 (its @values look unassigned); never part of a render. */
const SC2154_WAIVER = "# shellcheck disable=SC2154";

/** The text of pod/scripts/<name> (a .sh file, or an .awk program a script includes), as it is in the tree. */
export function shellFile(name: string): string {
  if (!/^[a-z0-9-]+\.(sh|awk)$/.test(name))
    throw new Error(`shell file name '${name}' must be <lowercase-name>.sh (or .awk)`);
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(`${SHELL_DIR}${name}`, "utf8");
    cache.set(name, text);
  }
  return text;
}

/** The names a file's `# @values` line declares (empty when it has none). */
export function declaredValues(text: string): string[] {
  const line = /^# @values((?: [a-z_][a-z0-9_]*)+)$/m.exec(text);
  return line === null ? [] : (line[1] as string).trim().split(" ");
}

/**
 * A value as sh reads it: numbers as they are, strings single-quoted (always: `restore-pending` bare reads as
 * arithmetic to shellcheck).
 */
function shValue(v: string | number): string {
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
    return String(v);
  }
  return shQuote(v);
}

/** The lines of an included file after its header comment (the shebang and the leading `#` lines). */
function includedLines(name: string): string[] {
  const lines = shellFile(name).replace(/\n$/, "").split("\n");
  let i = 0;
  while (i < lines.length && (lines[i] as string).startsWith("#")) i++;
  return lines.slice(i);
}

/**
 * pod/scripts/<name> with its `# @values` line filled from `values` and its `# @include` lines
 * expanded. Throws naming the script and the key when `values` lacks a declared name or has one
 * the file does not declare.
 */
export function renderShellFile(name: string, values: Record<string, string | number>): string {
  const text = shellFile(name);
  const declared = declaredValues(text);
  const missing = declared.filter((k) => values[k] === undefined);
  const extra = Object.keys(values).filter((k) => !declared.includes(k));
  if (missing.length > 0) throw new Error(`${name}: no value for ${missing.join(", ")} (declared by its # @values)`);
  if (extra.length > 0) throw new Error(`${name}: ${extra.join(", ")} given but not declared by its # @values`);
  const out: string[] = [];
  for (const line of text.replace(/\n$/, "").split("\n")) {
    if (line.startsWith(SC2154_WAIVER)) continue;
    if (line.startsWith("# @values")) out.push(...declared.map((k) => `${k}=${shValue(values[k] as string | number)}`));
    else if (line.startsWith("# @include ")) out.push(...includedLines(line.slice("# @include ".length).trim()));
    else out.push(line);
  }
  return out.join("\n") + "\n";
}
