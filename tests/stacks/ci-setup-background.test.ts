/**
 * `.ci/setup --pods` hands the real cluster's toolchain build to a background job (lock taken by
 * setup, inherited by the job, closed by setup); the pods tier's global setup waits on that lock.
 * Here the hand-over is done the same way with real flock(1) and a real child: the wait returns only
 * once the job wrote its status, and a failed or status-less job fails naming the log and its tail.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { awaitBackgroundBuild } from "../pods/support/global-cluster.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** As setup does: take the lock, start the job holding it, close setup's copy; the job writes LOG then STATUS after SLEEP. */
function startJob(exit: number | "none", sleep: string): string {
  const dir = mkdtempSync(join(tmpdir(), "bg-build-"));
  dirs.push(dir);
  const p = join(dir, "real-cluster-build");
  const job =
    exit === "none"
      ? `sleep ${sleep}; echo 'built nothing' >"$P.log"`
      : `sleep ${sleep}; printf 'line 1\\nthe error\\n' >"$P.log"; echo ${exit} >"$P.status"`;
  const r = spawnSync("bash", ["-c", `P='${p}'; exec 8>"$P.lock"; flock -n 8; ( ${job} ) >/dev/null 2>&1 & exec 8>&-`]);
  expect(r.status).toBe(0);
  return p;
}

describe("awaitBackgroundBuild (the pods tier waits for setup's background build)", () => {
  it("does nothing when setup started no background build", () => {
    const said: string[] = [];
    awaitBackgroundBuild(undefined, (m) => said.push(m));
    expect(said).toEqual([]);
  });

  it("returns only after the job wrote status 0, saying where its log is", () => {
    const p = startJob(0, "1.5");
    expect(existsSync(`${p}.status`)).toBe(false);
    const said: string[] = [];
    awaitBackgroundBuild(p, (m) => said.push(m));
    expect(readFileSync(`${p}.status`, "utf8").trim()).toBe("0");
    expect(said.join("\n")).toContain(`${p}.log`);
  });

  it("fails naming the exit status, the log and its last lines when the job failed", () => {
    const p = startJob(3, "0.5");
    expect(() => awaitBackgroundBuild(p, () => {})).toThrow(
      /failed \(exit 3\) \(log: .*real-cluster-build\.log\)[^]*the error/,
    );
  });

  it("fails when the job ended without a status, and when the lock does not exist", () => {
    const p = startJob("none", "0.2");
    expect(() => awaitBackgroundBuild(p, () => {})).toThrow(/ended without a status[^]*built nothing/);
    expect(() => awaitBackgroundBuild(join(dirs[0]!, "nope"), () => {})).toThrow(/nope\.lock does not exist/);
  });
});
