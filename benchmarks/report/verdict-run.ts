/**
 * The verdict of a finished run directory (local comparison): loaded as the report loads it, so
 * summary.md, the terminal and report.html say the same. Appends its section to summary.md and
 * returns the terminal text ("" when the run has not both modes).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { loadSource } from "./load.js";
import { renderVerdictMarkdown, renderVerdictText, verdict, verdictInputs } from "./verdict.js";

export function writeRunVerdict(runDir: string): string {
  const comparisons = verdictInputs([loadSource(runDir)]);
  const out: string[] = [];
  for (const { input } of comparisons) {
    const lines = verdict(input);
    appendFileSync(join(runDir, "summary.md"), `\n${renderVerdictMarkdown("", lines).join("\n")}`);
    out.push(renderVerdictText("", lines));
  }
  return out.join("\n\n");
}
