/**
 * The vbench CLI's error contract, run as a user runs it (child node processes): with `--json`
 * every command that has the flag prints JSON on stdout for its errors too
 * (`{ ok: false, error: { code, message, exitCode } }`), exit codes unchanged; out-of-range drill
 * shape flags are usage errors naming the flag and range; and a drill stopped by SIGTERM removes
 * its temporary directory (data, the 0600 password file) and leaves no valkey-server behind.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../harness/local/ports.js";
import { eventually, processesWithMarker, runVbench as runMarked } from "../support/processes.js";
import { runVbench } from "../support/verify-helpers.js";

/** A process's command line ("" once it is gone). */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

const scratch = mkdtempSync(join(tmpdir(), "vbench-json-errors-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface JsonError {
  ok: false;
  error: { code: string; message: string; exitCode: number };
}

/** The JSON error a --json run printed (the whole of stdout must be one JSON document). */
function jsonError(stdout: string): JsonError {
  return JSON.parse(stdout) as JsonError;
}

describe("--json errors are JSON", () => {
  it("usage errors of every command with --json: exit 2, stdout is { ok: false, error: { code: USAGE, ... } }", async () => {
    const cases: [string[], string][] = [
      [["verify", "--json"], "--mode cluster|replication is required"],
      [["verify", "--mode", "sharded", "--seed", "127.0.0.1:1", "--json"], "sharded"],
      [["bench", "--json"], "--target HOST:PORT is required"],
      [["bench", "--target", "nohost", "--json"], "--target"],
      [["drill", "--mode", "cluster", "--fault", "meteor", "--json"], "--fault must be one of"],
      [["drill", "--fault", "primary", "--json"], "--mode"],
      [["sweep", "--shards", "x", "--json"], "--shards"],
      [["local", "--drills", "flood", "--json"], "--drills: unknown fault(s) flood"],
      [["report", "--json"], "--from"],
    ];
    const runs = await Promise.all(cases.map(([args]) => runVbench(args)));
    runs.forEach((run, i) => {
      const [args, text] = cases[i]!;
      expect([args.join(" "), run.code]).toEqual([args.join(" "), 2]);
      const out = jsonError(run.stdout);
      expect(out.ok).toBe(false);
      expect(out.error).toMatchObject({ code: "USAGE", exitCode: 2 });
      expect(out.error.message).toContain(text);
      expect(run.stderr).toContain(text); // the one line on stderr stays
    });
    // Without --json stdout stays empty.
    const plain = await runVbench(["bench"]);
    expect([plain.code, plain.stdout]).toEqual([2, ""]);
  }, 150_000);

  it("connection errors: exit 2 with code CONNECTION (verify and bench)", async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const [verify, bench] = await Promise.all([
      runVbench(["verify", "--mode", "replication", "--seed", dead, "--json"]),
      runVbench(["bench", "--target", dead, "--requests", "10", "--output", scratch, "--json"]),
    ]);
    for (const run of [verify, bench]) {
      expect(run.code, run.stderr).toBe(2);
      const out = jsonError(run.stdout);
      expect(out.error).toMatchObject({ code: "CONNECTION", exitCode: 2 });
      expect(out.error.message).toContain(`cannot reach ${dead}`);
    }
  }, 60_000);
});

describe("vbench drill shape flags", () => {
  it("out-of-range shape flags are usage errors naming the flag and the range, before anything starts", async () => {
    const cases: [string[], string][] = [
      [["--mode", "cluster", "--primaries", "400"], "--primaries must be an integer from 1 to 57 (got '400')"],
      [["--mode", "replication", "--replicas", "300"], "--replicas must be an integer from 1 to 49 (got '300')"],
      [
        ["--mode", "cluster", "--replicas-per-primary", "0"],
        "--replicas-per-primary must be an integer from 1 to 56 (got '0')",
      ],
      [
        ["--mode", "cluster", "--primaries", "40", "--replicas-per-primary", "2"],
        "--primaries 40 × (1 + --replicas-per-primary 2) = 120 nodes",
      ],
    ];
    const runs = await Promise.all(
      cases.map(([args]) => runVbench(["drill", "--fault", "primary", ...args, "--json"])),
    );
    runs.forEach((run, i) => {
      const [, text] = cases[i]!;
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(text);
      expect(run.stderr).not.toMatch(/ENOTFOUND|EADDRNOTAVAIL|EINVAL|address/);
      expect(jsonError(run.stdout).error).toMatchObject({ code: "USAGE", exitCode: 2 });
    });
  }, 60_000);
});

describe("vbench drill stopped by SIGTERM", () => {
  it("removes its temporary directory (data, password file), leaves no valkey-server, ends --json with INTERRUPTED", async () => {
    const tmp = mkdtempSync(join(scratch, "tmp-"));
    const run = await runMarked(
      [
        "drill",
        "--mode",
        "cluster",
        "--fault",
        "replica",
        "--duration-s",
        "1",
        "--warmup-s",
        "2",
        "--rate",
        "50",
        "--json",
      ],
      "VBENCH_SIGTERM_MARKER",
      /fault: /,
      { signal: "SIGTERM", env: { TMPDIR: tmp } },
    );
    expect(run.code, run.stderr).toBe(143);
    expect(run.stderr).toContain("SIGTERM: stopped every process it started");
    expect(jsonError(run.stdout).error).toEqual({ code: "INTERRUPTED", message: "stopped by SIGTERM", exitCode: 143 });
    // No valkey-server of it is left the moment it exited; its helpers' short sleeps end within seconds.
    const commands = (pids: number[]) => pids.map((pid) => commandLine(pid)).filter((c) => c !== "");
    const servers = commands(processesWithMarker(run.marker)).filter((c) => c.includes("valkey-server"));
    expect(servers.join(" | ")).toBe("");
    // The drill's directories go under TMPDIR (os.tmpdir()); tsx keeps its own cache there too.
    expect(readdirSync(tmp).filter((name) => !name.startsWith("tsx-"))).toEqual([]);
    const none = () => Promise.resolve(processesWithMarker(run.marker).length === 0 ? true : undefined);
    await eventually("no process of the drill left", 5000, none).catch(() => {
      throw new Error(`left behind: ${commands(processesWithMarker(run.marker)).join(" | ")}`);
    });
  }, 120_000);
});
