/** Ends the background shell loops a local cluster target leaves behind (see reapBackgroundScripts). */
import { readdirSync, readFileSync } from "node:fs";
import { sleep } from "../../core/util/poll-until.js";

/**
 * The heal and failback loops (and their cli calls) run beside each server and end on their own
 * about a second after it; wait for them, then SIGKILL the rest, found by this topology's own
 * environment marker (our hosts file path) and killed by pid. Linux /proc only; elsewhere a no-op.
 */
export async function reapBackgroundScripts(marker: string, graceMs = 4000): Promise<void> {
  const find = (): number[] => {
    let entries: string[];
    try {
      entries = readdirSync("/proc");
    } catch {
      return [];
    }
    return entries.flatMap((e) => {
      if (!/^\d+$/.test(e)) return [];
      try {
        return readFileSync(`/proc/${e}/environ`, "latin1").split("\0").includes(marker) &&
          !/\) Z /.test(readFileSync(`/proc/${e}/stat`, "latin1"))
          ? [Number(e)]
          : [];
      } catch {
        return [];
      }
    });
  };
  const deadline = Date.now() + graceMs;
  while (find().length > 0 && Date.now() < deadline) await sleep(100);
  for (const pid of find()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}
