/**
 * Test helpers shared by the integration and e2e suites: which processes a run left behind, and
 * waiting for a value to appear.
 */
import { readdirSync, readFileSync } from "node:fs";
import { sleep } from "../../benchmarks/util/poll-until.js";

/** PIDs of live (non-zombie) processes whose environment carries `marker` ("KEY=value"). */
export function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(marker)) {
        if (!/\) Z /.test(readFileSync(`/proc/${entry}/stat`, "latin1"))) pids.push(Number(entry));
      }
    } catch {
      /* exited while we looked, or not ours to read */
    }
  }
  return pids;
}

/**
 * Polls `probe` until it returns a value (not undefined) and returns it. A probe that throws is
 * polled again; on timeout the error names `what` and the last failure.
 */
export async function eventually<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, intervalMs = 300): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
    await sleep(intervalMs);
  }
}
