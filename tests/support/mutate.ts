/**
 * A small mutation run over the code whose mistakes cost users most: the verifier's analysis (its Sentinel side too), the
 * AZ-aware bootstrap planner and the drills' loss bounds. Each mutant changes one operator on one
 * line (a comparison's edge, an equality, a boolean operator, ±1, min/max, a boolean literal),
 * runs that code's pure unit tests, and counts as killed when they fail. Prints every survivor
 * (file:line, before → after) and the score per file; exit 1 when a file scores under --min.
 * The source file is always put back (also on SIGINT/SIGTERM).
 *
 *   npm run mutate [-- --files verify,sentinel,bootstrap,bounds] [--max 40] [--min 0]
 *
 * --max N: at most N mutants per file, spread evenly over its candidates (0 = all).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Target {
  key: string;
  file: string;
  tests: string[];
}

const TARGETS: readonly Target[] = [
  { key: "verify", file: "core/verify/cluster-analysis.ts", tests: ["tests/core/cluster-analysis.test.ts"] },
  { key: "verify", file: "core/verify/replication-analysis.ts", tests: ["tests/core/cluster-analysis.test.ts"] },
  { key: "sentinel", file: "core/verify/sentinel-analysis.ts", tests: ["tests/core/sentinel-analysis.test.ts"] },
  {
    key: "bootstrap",
    file: "core/bootstrap/az-aware-planner.ts",
    tests: ["tests/core/az-aware-planner.test.ts"],
  },
  { key: "bounds", file: "core/drill/bounds.ts", tests: ["tests/core/drill-bounds.test.ts"] },
];

/** One operator swap: a pattern (with spaces around binary operators, as prettier writes them) and its replacement. */
const OPERATORS: ReadonlyArray<[RegExp, string]> = [
  [/ >= /g, " > "],
  [/ <= /g, " < "],
  [/ > /g, " >= "],
  [/ < /g, " <= "],
  [/ === /g, " !== "],
  [/ !== /g, " === "],
  [/ && /g, " || "],
  [/ \|\| /g, " && "],
  [/ \+ 1\b/g, " - 1"],
  [/ - 1\b/g, " + 1"],
  [/\bMath\.max\(/g, "Math.min("],
  [/\bMath\.min\(/g, "Math.max("],
  [/\btrue\b/g, "false"],
  [/\bfalse\b/g, "true"],
];

export interface Mutant {
  line: number;
  before: string;
  after: string;
  source: string;
}

/** Every single-site mutant of `source`; comment, import and type-only lines are left alone. */
export function mutants(source: string): Mutant[] {
  const lines = source.split("\n");
  const out: Mutant[] = [];
  lines.forEach((text, i) => {
    const code = text.trim();
    if (
      code.startsWith("//") ||
      code.startsWith("*") ||
      code.startsWith("/*") ||
      code.startsWith("import ") ||
      /^(export )?(interface|type) /.test(code)
    )
      return;
    for (const [pattern, replacement] of OPERATORS) {
      for (const m of text.matchAll(pattern)) {
        const at = m.index ?? 0;
        const after = text.slice(0, at) + replacement + text.slice(at + m[0].length);
        out.push({
          line: i + 1,
          before: text.trim(),
          after: after.trim(),
          source: [...lines.slice(0, i), after, ...lines.slice(i + 1)].join("\n"),
        });
      }
    }
  });
  return out;
}

/** `max` items spread evenly over `all` (all of them when max is 0 or not smaller). */
export function spread<T>(all: readonly T[], max: number): T[] {
  if (max <= 0 || all.length <= max) return [...all];
  return Array.from({ length: max }, (_, k) => all[Math.floor((k * all.length) / max)]!);
}

function testsPass(tests: readonly string[]): boolean {
  const r = spawnSync(
    process.execPath,
    ["node_modules/vitest/vitest.mjs", "run", "--project", "unit", "--bail", "1", "--reporter", "dot", ...tests],
    {
      stdio: "ignore",
      timeout: 120_000,
    },
  );
  return r.status === 0;
}

function main(): number {
  const { values } = parseArgs({
    options: { files: { type: "string" }, max: { type: "string" }, min: { type: "string" } },
  });
  const keys = (values.files ?? "verify,sentinel,bootstrap,bounds").split(",").map((k) => k.trim());
  for (const k of keys)
    if (!TARGETS.some((t) => t.key === k))
      throw new Error(`--files: '${k}' is not one of ${[...new Set(TARGETS.map((t) => t.key))].join(", ")}`);
  const max = Number(values.max ?? 40);
  const min = Number(values.min ?? 0);
  if (!Number.isInteger(max) || max < 0) throw new Error(`--max must be a whole number ≥ 0 (got ${values.max})`);
  if (!Number.isFinite(min) || min < 0 || min > 100)
    throw new Error(`--min must be a percentage 0–100 (got ${values.min})`);
  let low = false;
  for (const t of TARGETS.filter((x) => keys.includes(x.key))) {
    const original = readFileSync(t.file, "utf8");
    const restore = (): void => writeFileSync(t.file, original);
    const onSignal = (): void => (restore(), process.exit(130));
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    if (!testsPass(t.tests))
      throw new Error(`${t.file}: its tests (${t.tests.join(", ")}) fail before any mutation; fix them first`);
    const chosen = spread(mutants(original), max);
    const survivors: Mutant[] = [];
    try {
      for (const m of chosen) {
        writeFileSync(t.file, m.source);
        if (testsPass(t.tests)) survivors.push(m);
      }
    } finally {
      restore();
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    }
    const score = chosen.length === 0 ? 100 : (100 * (chosen.length - survivors.length)) / chosen.length;
    if (score < min) low = true;
    process.stdout.write(
      `${t.file}: ${chosen.length - survivors.length}/${chosen.length} killed (${score.toFixed(0)} %)\n`,
    );
    for (const s of survivors) process.stdout.write(`  survived ${t.file}:${s.line}: ${s.before}  →  ${s.after}\n`);
  }
  return low ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = main();
  } catch (err) {
    process.stderr.write(`mutate: ${(err as Error).message}\n`);
    process.exitCode = 2;
  }
}
