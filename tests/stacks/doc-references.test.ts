/**
 * What README.md and docs/*.md tell a user to type stays real: every `vbench <command>` they name
 * is a command of the CLI and every `--flag` written after it (on the same line) is one of that
 * command's options; every stack key they name in backticks (`valkey.cluster.primaries`,
 * `drills.faults`, …) is a key of the schema or a section holding keys. Offline: reads the files,
 * the commander program and the schema's own metadata.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../apps/vbench/cli.js";
import { describeKeys } from "../../config/meta.js";
import { stackInputSchema } from "../../config/sections.js";

const DOCS = [
  "README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f)),
];
const text = (f: string): string => readFileSync(f, "utf8");

/**
 * `vbench <command> ...flags` as a doc line writes it: through npm (`vbench -- <command>`), or
 * followed by at least one flag (prose such as "every vbench command" or the client name
 * `vbench mix (vload)` is not a call).
 */
export function vbenchCalls(doc: string): Array<{ command: string; flags: string[]; line: number }> {
  const calls: Array<{ command: string; flags: string[]; line: number }> = [];
  doc.split("\n").forEach((lineText, i) => {
    for (const m of lineText.matchAll(/\bvbench( --)? ([a-z][a-z-]*)([^`|]*)/g)) {
      const flags = [...(m[3] ?? "").matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)].map((f) => f[1]!);
      if (m[1] !== undefined || flags.length > 0) calls.push({ command: m[2]!, flags, line: i + 1 });
    }
  });
  return calls;
}

const FILE_SUFFIX = /\.(conf|cfg|ts|js|sh|ya?ml|json|md|csv|html|py|go|txt|log|rdb|aof)$/;

/**
 * Backticked dotted names whose first part is a config section, minus file names and SDK calls
 * (`aws.ssm.getParameter`). The stack output's paths are written `report.…` and are not keys.
 */
export function configRefs(doc: string, sections: ReadonlySet<string>): string[] {
  return [...doc.matchAll(/`(?:valkey-on-eks:)?([a-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)+)`/g)]
    .map((m) => m[1]!)
    .filter((ref) => sections.has(ref.split(".")[0]!) && !FILE_SUFFIX.test(ref) && !/\.get[A-Z]/.test(ref));
}

describe("commands and keys the docs name", () => {
  it("finds what it checks (the readers are not empty)", () => {
    expect(
      vbenchCalls(
        "run `npm run --silent vbench -- drill --mode cluster --fault all --json`\nevery vbench command; `vbench verify --seed`",
      ),
    ).toEqual([
      { command: "drill", flags: ["--mode", "--fault", "--json"], line: 1 },
      { command: "verify", flags: ["--seed"], line: 2 },
    ]);
    expect(
      configRefs(
        "set `drills.faults`, not `valkey.conf`, `aws.ssm.getParameter`, `foo.bar`",
        new Set(["drills", "valkey", "aws"]),
      ),
    ).toEqual(["drills.faults"]);
  });

  it("every `vbench <command> --flag` in README.md and docs/ is a command and its option", () => {
    const program = buildProgram();
    const wrong: string[] = [];
    let seen = 0;
    for (const f of DOCS) {
      for (const call of vbenchCalls(text(f))) {
        const cmd = program.commands.find((c) => c.name() === call.command);
        if (cmd === undefined) {
          // Prose like "vbench drill's" is still a command name; words that are not commands are named.
          wrong.push(
            `${f}:${call.line}: vbench ${call.command} is not a command (${program.commands.map((c) => c.name()).join(", ")})`,
          );
          continue;
        }
        seen++;
        const longs = new Set([...cmd.options.map((o) => o.long), "--help"]);
        for (const flag of call.flags)
          if (!longs.has(flag)) wrong.push(`${f}:${call.line}: vbench ${call.command} has no ${flag}`);
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(wrong).toEqual([]);
  });

  it("every stack key named in backticks in README.md and docs/ exists in the schema", () => {
    const paths = describeKeys(stackInputSchema).map((k) => k.path.replaceAll("[]", ""));
    const sections = new Set(paths.map((p) => p.split(".")[0]!).filter((p) => !p.includes(":")));
    const known = new Set(paths);
    const wrong: string[] = [];
    let seen = 0;
    for (const f of DOCS) {
      for (const ref of configRefs(text(f), sections)) {
        seen++;
        if (!known.has(ref)) wrong.push(`${f}: \`${ref}\``);
      }
    }
    expect(seen).toBeGreaterThan(30);
    expect([...new Set(wrong)]).toEqual([]);
  });
});
