/** Shared by the live verifier tests: run the real CLI in a child process, write zone files. */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const tsxCli = createRequire(import.meta.url).resolve("tsx/cli");
const root = join(import.meta.dirname, "../..");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `vbench <args>` as `npm run vbench` would (tsx apps/vbench/cli.ts), in a child process;
 * `timeoutMs` (0: none) SIGTERMs it when it runs longer (the result then has code -1).
 */
export function runVbench(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 0,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const options = { cwd: root, env: { ...process.env, ...env }, timeout: timeoutMs };
    execFile(process.execPath, [tsxCli, join(root, "apps/vbench/cli.ts"), ...args], options, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "verify-zones-"));
let n = 0;

/** Writes a zone map to a fresh JSON file and returns its path. */
export function zoneFile(map: Record<string, string>): string {
  const path = join(dir, `zones-${++n}.json`);
  writeFileSync(path, JSON.stringify(map));
  return path;
}

export const failureCodes = (r: { failures: { code: string }[] }): string[] =>
  [...new Set(r.failures.map((f) => f.code))].sort();
