/**
 * A loop that runs `tick` every `intervalMs` until stopped (the tests' background watchers: a
 * fake CSI driver, nodes added on demand, pod IPs handed out). With `onError`, a failing tick is
 * reported there and the loop goes on; without, the first failure ends the loop and `stop()`
 * rejects with it.
 */
import { sleep } from "../../core/util/poll-until.js";

export interface BackgroundPoll {
  stop(): Promise<void>;
}

export function pollInBackground(
  tick: () => Promise<void>,
  intervalMs: number,
  onError?: (err: unknown) => void,
): BackgroundPoll {
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        await tick();
      } catch (err) {
        if (onError === undefined) throw err;
        onError(err);
      }
      await sleep(intervalMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
