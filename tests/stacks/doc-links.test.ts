/**
 * The docs name only files, folders and npm scripts that exist. Scanned: README.md, docs/**\/*.md
 * and components/**\/README.md. The rule, explicitly:
 *
 * - A markdown link `[text](target)` is checked unless its target is a URL (`scheme:`) or an
 *   anchor alone (`#…`); the `#anchor` part is dropped and the target resolved from the doc's own
 *   folder, as a markdown renderer does.
 * - Inside inline code (`…`, also across a line break) and fenced code blocks, every
 *   whitespace-separated token that starts with one of this repository's top-level folders
 *   (REPO_ROOTS, with its slash: `benchmarks/`, `tests/`, `.ci/`, …) or is one of its top-level
 *   files is a path from the repository root. Anything else is not checked: a bare word (`pod`,
 *   `config`), relative paths (`./api` in an upstream go.mod, `kit/inputs.ts` in a folder's
 *   README: link them to have them checked), in-container and system paths (`/data`, `/etc/…`,
 *   `~/.cache/…`), URLs, Go/Python module paths, upstream source files (`src/sentinel.c`), API
 *   groups (`batch/v1`), Kubernetes labels, output folders (`results/…`).
 * - In a path, `<name>` stands for any one path segment (`stacks/Pulumi.<stack>.yaml`),
 *   `{a,b}` for each alternative and `*` for any characters within a segment; such a path passes
 *   when at least one file or folder matches. Surrounding punctuation (`(),;:'"`) and a trailing
 *   `.` or `…` are dropped.
 * - `npm run <script>` (also `npm run --silent <script>`) and `npm test` anywhere in the text
 *   name a script of package.json.
 *
 * A file exists when git knows it (tracked, or untracked and not ignored); a folder exists when
 * such a file lies under it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";

/** Top-level folders whose names start a repository path in code spans. */
export const REPO_ROOTS = [
  "benchmarks",
  "components",
  "config",
  "stacks",
  "tests",
  "docs",
  "pod",
  "vocabulary",
  ".ci",
  ".github",
];
/** Top-level files a code span may name alone. */
export const REPO_FILES = [
  "README.md",
  "versions.env",
  "versions.ts",
  "package.json",
  "Pulumi.yaml",
  "tsconfig.json",
  "vitest.config.ts",
];

export interface DocRef {
  kind: "path" | "script";
  /** The path from the repository root (normalized), or the script name. */
  target: string;
  /** As written in the doc. */
  written: string;
  line: number;
}

const lineAt = (text: string, offset: number): number => text.slice(0, offset).split("\n").length;

/** Character ranges of fenced code blocks (``` or ~~~ at the start of a line). */
function fencedRanges(text: string): [number, number][] {
  const ranges: [number, number][] = [];
  const fence = /^(```|~~~)[^\n]*$/gm;
  let open: number | undefined;
  for (const m of text.matchAll(fence)) {
    if (open === undefined) open = m.index;
    else {
      ranges.push([open, m.index + m[0].length]);
      open = undefined;
    }
  }
  if (open !== undefined) ranges.push([open, text.length]);
  return ranges;
}

function cleanToken(token: string): string {
  return token
    .replace(/^[("'`,;:]+/, "")
    .replace(/[)"'`,;:]+$/, "")
    .replace(/(\.|…)+$/, "");
}

function isRepoPath(token: string): boolean {
  return REPO_FILES.includes(token) || REPO_ROOTS.some((root) => token.startsWith(`${root}/`));
}

/** Every path and npm script a doc names, by the rule above. `docPath` is from the repository root. */
export function extractReferences(docPath: string, text: string): DocRef[] {
  const docDir = posix.dirname(docPath);
  const refs: DocRef[] = [];
  const fences = fencedRanges(text);

  const addTokens = (span: string, offset: number) => {
    let at = 0;
    for (const raw of span.split(/\s+/)) {
      const index = span.indexOf(raw, at);
      at = index + raw.length;
      const token = cleanToken(raw);
      if (token === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(token)) continue;
      if (isRepoPath(token))
        refs.push({ kind: "path", target: token, written: token, line: lineAt(text, offset + index) });
    }
  };

  // The fence lines themselves (```bash) are blanked, keeping offsets and so line numbers.
  for (const [a, b] of fences)
    addTokens(
      text.slice(a, b).replace(/^(```|~~~)[^\n]*/gm, (line) => " ".repeat(line.length)),
      a,
    );
  // Prose with the fenced blocks blanked (newlines kept), so a fence's backticks never pair with
  // a code span's.
  let prose = text;
  for (const [a, b] of fences) prose = prose.slice(0, a) + prose.slice(a, b).replace(/[^\n]/g, " ") + prose.slice(b);
  for (const m of prose.matchAll(/`([^`]+)`/g)) addTokens(m[1] ?? "", m.index + 1);
  for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const written = m[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(written) || written.startsWith("#")) continue;
    const path = written.replace(/#.*$/, "");
    const target = path.startsWith("/") ? path.slice(1) : posix.normalize(posix.join(docDir, path));
    refs.push({ kind: "path", target, written, line: lineAt(text, m.index) });
  }
  for (const m of text.matchAll(/\bnpm (?:run (?:--silent |-s )?([\w:.-]+)|(test)\b)/g)) {
    refs.push({ kind: "script", target: m[1] ?? m[2] ?? "", written: m[0], line: lineAt(text, m.index) });
  }
  return refs;
}

const escapeRegex = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** `{a,b}` expanded to each alternative (nested braces too). */
export function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (m === null) return [path];
  return (m[1] ?? "")
    .split(",")
    .flatMap((alt) => expandBraces(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)));
}

/** A matcher of "some file or folder matches this path" over the repository's paths. */
export function pathMatcher(files: readonly string[]): (path: string) => boolean {
  const entries = new Set<string>();
  for (const f of files) {
    entries.add(f);
    const parts = f.split("/");
    for (let i = 1; i < parts.length; i++) entries.add(parts.slice(0, i).join("/"));
  }
  const all = [...entries];
  return (path) =>
    expandBraces(path).some((p) => {
      const bare = p.replace(/\/+$/, "");
      if (!/[<*]/.test(bare)) return entries.has(bare);
      const pattern = bare
        .split(/(<[^>]*>|\*)/)
        .map((part) => (part === "*" ? "[^/]*" : part.startsWith("<") ? "[^/]+" : escapeRegex(part)))
        .join("");
      const re = new RegExp(`^${pattern}$`);
      return all.some((e) => re.test(e));
    });
}

/** One line per reference that names no file, folder or script: `doc:line: …`. */
export function missingReferences(
  docPath: string,
  text: string,
  exists: (path: string) => boolean,
  scripts: ReadonlySet<string>,
): string[] {
  const refs = extractReferences(docPath, text).sort((x, y) => x.line - y.line);
  return refs.flatMap((ref) => {
    if (ref.kind === "script")
      return scripts.has(ref.target) ? [] : [`${docPath}:${ref.line}: no npm script "${ref.target}" (${ref.written})`];
    return exists(ref.target)
      ? []
      : [
          `${docPath}:${ref.line}: no file or folder ${ref.target}${ref.written === ref.target ? "" : ` (written ${ref.written})`}`,
        ];
  });
}

describe("the extractor and checker", () => {
  const files = [
    "core/verify/cluster-analysis.ts",
    "docs/testing.md",
    "stacks/Pulumi.cluster.yaml",
    "tests/core/verify-topology-cluster.test.ts",
    "README.md",
  ];
  const exists = pathMatcher(files);
  const scripts = new Set(["local", "test", "vbench"]);
  const doc = [
    "# Fake",
    "See `core/verify/cluster-analysis.ts` and `benchmarks/verify/gone.ts`.",
    "Links: [testing](testing.md), [missing](nowhere.md#part), [root](../README.md), [web](https://example.com/x.md), [here](#anchor).",
    "Run `npm run --silent vbench -- verify` or npm run vanished, then npm test.",
    "In the pod: `/data/nodes.conf`, `/etc/valkey`, `~/.cache/valkey-on-eks/`, `src/sentinel.c`, `batch/v1`, `results/<ts>/`.",
    "Patterns: `stacks/Pulumi.<stack>.yaml`, `tests/core/verify-topology-*.test.ts`, `tests/{core,pods}/`, `stacks/Pulumi.<x>.json`.",
    "A span over a line break: `bash .ci/setup npx tsx",
    "benchmarks/perf/nope.ts`.",
    "```bash",
    "npx tsx tests/missing-dir/x.ts   # checked in code blocks too",
    "```",
    "`tests/after-fence/x.ts` right after a fence.",
  ].join("\n");

  it("names each missing path and script with its line, and nothing else", () => {
    expect(missingReferences("docs/fake.md", doc, exists, scripts)).toEqual([
      "docs/fake.md:2: no file or folder benchmarks/verify/gone.ts",
      "docs/fake.md:3: no file or folder docs/nowhere.md (written nowhere.md#part)",
      'docs/fake.md:4: no npm script "vanished" (npm run vanished)',
      "docs/fake.md:6: no file or folder stacks/Pulumi.<x>.json",
      "docs/fake.md:7: no file or folder .ci/setup",
      "docs/fake.md:8: no file or folder benchmarks/perf/nope.ts",
      "docs/fake.md:10: no file or folder tests/missing-dir/x.ts",
      "docs/fake.md:12: no file or folder tests/after-fence/x.ts",
    ]);
  });

  it("passes a doc whose references all exist", () => {
    const good = "Run `npm run local`; see `docs/testing.md`, [t](../docs/testing.md) and `tests/{core,}/`.";
    expect(missingReferences("docs/ok.md", good, exists, scripts)).toEqual([]);
  });

  it("expands braces", () => {
    expect(expandBraces("tests/components/{a,b}.test.ts")).toEqual([
      "tests/components/a.test.ts",
      "tests/components/b.test.ts",
    ]);
  });
});

describe("the docs name only paths and scripts that exist", () => {
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .filter((f) => existsSync(f));
  const docs = files.filter(
    (f) => f === "README.md" || /^docs\/.+\.md$/.test(f) || /^components\/(.+\/)?README\.md$/.test(f),
  );
  const scripts = new Set(
    Object.keys((JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts),
  );
  const exists = pathMatcher(files);

  it("scans README.md, docs/ and the components' READMEs", () => {
    expect(docs).toContain("README.md");
    expect(docs).toContain("components/steps/README.md");
    expect(docs.filter((d) => d.startsWith("docs/")).length).toBeGreaterThan(5);
  });

  it.each(docs)("%s", (doc) => {
    expect(missingReferences(doc, readFileSync(doc, "utf8"), exists, scripts)).toEqual([]);
  });
});
