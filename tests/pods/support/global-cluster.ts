/**
 * Global setup of the `pods` project: the files start the local real cluster when none runs
 * (kube:local up is idempotent) and leave it running for the next file; once the project is done
 * it is stopped again, unless it was already running before the project started (someone's own
 * `kube:local up`, kept as found). Nothing is done where the files skip (not root).
 */
import { down, status } from "../../../apps/kube-local/cluster.js";

export default async function setup(): Promise<() => Promise<void>> {
  if (process.getuid?.() !== 0) return () => Promise.resolve();
  const runningBefore = (await status()) !== undefined;
  return async () => {
    if (!runningBefore) await down();
  };
}
