/** The perf scripts' command-line flags (apps/perf/*-perf.ts). */

/** `--name`'s whole number ≥ 1, or `fallback` when the flag is absent; else a clear error naming the flag. */
export function wholeFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1 (got ${value})`);
  return n;
}
