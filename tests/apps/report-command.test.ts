/** `vbench report` as a user runs it: a child process, exit codes, messages, files written. */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";
import { runVbench } from "../support/verify-helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-report-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vbench report", () => {
  it("renders a local run and a stack report side by side into --output, and into the run dir by default", async () => {
    const run = join(scratch, "20260101-000000");
    cpSync(LOCAL_RUN_DIR, run, { recursive: true });
    const stack = writeJson(scratch, "stack-cluster.json", fixtureStackReport("cluster"));
    const out = join(scratch, "side-by-side");
    const [both, single] = await Promise.all([
      runVbench(["report", "--from", run, "--from", stack, "--output", out, "--json"]),
      runVbench(["report", "--from", run]),
    ]);
    expect(both.code, both.stderr).toBe(0);
    expect(JSON.parse(both.stdout)).toMatchObject({ ok: true, report: join(out, "report.html"), screenshot: null });
    const page = readFileSync(join(out, "report.html"), "utf8");
    expect(page).toContain("20260101-000000 · cluster");
    expect(page).toContain("stack cluster · cluster");
    expect(single.code, single.stderr).toBe(0);
    expect(single.stdout).toBe(`report: ${join(run, "report.html")}\n`);
    expect(existsSync(join(run, "report.html"))).toBe(true);
  });

  it("exits 2 naming the bad path and field, never with a stack trace", async () => {
    const garbage = join(scratch, "garbage");
    mkdirSync(garbage);
    writeFileSync(join(garbage, "results.csv"), "\u0000\u0001 binary, junk\n1,2\n");
    const notReport = writeJson(scratch, "not-a-report.json", { schemaVersion: 1, project: "something-else" });
    const [csv, json, none] = await Promise.all([
      runVbench(["report", "--from", LOCAL_RUN_DIR, "--from", garbage, "--output", join(scratch, "never")]),
      runVbench(["report", "--from", notReport]),
      runVbench(["report"]),
    ]);
    expect(csv.code).toBe(2);
    expect(csv.stderr).toMatch(new RegExp(`^vbench: ${join(garbage, "results.csv")}: results.csv `));
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/^vbench: .*not-a-report\.json: not a stack report .*project: /);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--from <results dir | stack report .json | results.csv> is required");
    for (const r of [csv, json, none]) expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(scratch, "never"))).toBe(false);
  });
});
