/** Errors the vbench CLI turns into exit codes and one clear line on stderr. */

/** Bad flags or arguments: exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The thing checked is wrong (invalid config, unhealthy topology): exit 1. */
export class CheckFailed extends Error {
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = "CheckFailed";
  }
}

/** Parses a positive integer flag value, naming the flag when it is not one. */
export function positiveInt(flag: string): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new UsageError(`${flag} must be a positive integer (got '${value}')`);
    return Number(value);
  };
}

/** Parses a non-negative integer flag value. */
export function nonNegativeInt(flag: string): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value.trim())) throw new UsageError(`${flag} must be a non-negative integer (got '${value}')`);
    return Number(value);
  };
}

/** Parses a non-negative number flag value (fractions allowed), naming the flag when it is not one. */
export function nonNegativeNumber(flag: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value.trim());
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new UsageError(`${flag} must be a number ≥ 0 (got '${value}')`);
    return n;
  };
}

/** Something failed while running (a server would not start, a benchmark crashed): exit 1. */
export class RunFailed extends Error {
  readonly exitCode = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RunFailed";
  }
}
