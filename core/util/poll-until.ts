/**
 * Polls an async probe until it reports done or a deadline passes. The probe returns `true`
 * when done, or a string saying what it is still waiting for; that text ends up in the
 * timeout error, so a stuck wait names its cause.
 */

export interface PollOptions {
  timeoutMs: number;
  /** Pause between probes. @default 50 */
  intervalMs?: number;
  /** What is being waited for, for the timeout message (e.g. "cluster_state:ok on every node"). */
  what: string;
}

export class PollTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly lastStatus: string,
    timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}: ${lastStatus}`);
    this.name = "PollTimeoutError";
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `probe` returns true; rejects with PollTimeoutError naming the last status. */
export async function pollUntil(probe: () => Promise<true | string>, o: PollOptions): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const status = await probe();
    if (status === true) return;
    if (Date.now() >= deadline) throw new PollTimeoutError(o.what, status, o.timeoutMs);
    await sleep(o.intervalMs ?? 50);
  }
}
