/**
 * Errors the vbench CLI turns into exit codes and one clear line on stderr; with `--json` also
 * `{ "ok": false, "error": { "code", "message", "exitCode" } }` on stdout (cli.ts). `code` is a
 * stable string (README, "Exit codes and errors").
 */
import type { ConnectionError } from "../../core/topology/connector.js";

export type CliErrorCode =
  /** Bad flags or arguments (exit 2). */
  | "USAGE"
  /** An endpoint could not be reached, or refused the password (exit 2). */
  | "CONNECTION"
  /** Something answers at the endpoint, but not the Valkey/Redis protocol (exit 2). */
  | "NOT_VALKEY"
  /** `bench --cluster` against a server with cluster mode off (exit 2). */
  | "CLUSTER_MODE_DISABLED"
  /** `bench --cluster` against a cluster that does not serve every slot (exit 1). */
  | "CLUSTER_NOT_READY"
  /** The thing checked is wrong (exit 1; verify and config print their own JSON verdict instead). */
  | "CHECK_FAILED"
  /** Something failed while running (exit 1). */
  | "RUN_FAILED"
  /** Anything else (exit 2, as before codes existed). */
  | "UNEXPECTED"
  /** Stopped by SIGINT / SIGTERM / SIGHUP (exit 130 / 143 / 129). */
  | "INTERRUPTED";

/** An error with an exit code and a stable code; `reported` when the command already printed its JSON verdict. */
export class CliError extends Error {
  reported = false;
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    readonly code: CliErrorCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "CliError";
  }

  /** Marks the error as already reported on stdout (the command printed its JSON verdict). */
  markReported(): this {
    this.reported = true;
    return this;
  }
}

/** Bad flags or arguments, or an endpoint that cannot be used: exit 2. */
export class UsageError extends CliError {
  constructor(message: string, code: "USAGE" | "CONNECTION" | "NOT_VALKEY" | "CLUSTER_MODE_DISABLED" = "USAGE") {
    super(message, 2, code);
    this.name = "UsageError";
  }
}

/** An endpoint that cannot be reached, or is not a Valkey/Redis server: exit 2. */
export function connectionFailed(err: ConnectionError): UsageError {
  return new UsageError(err.message, err.kind === "not-valkey" ? "NOT_VALKEY" : "CONNECTION");
}

/** The thing checked is wrong (invalid config, unhealthy topology): exit 1. */
export class CheckFailed extends CliError {
  constructor(message: string, code: "CHECK_FAILED" | "CLUSTER_NOT_READY" = "CHECK_FAILED") {
    super(message, 1, code);
    this.name = "CheckFailed";
  }
}

/** Something failed while running (a server would not start, a benchmark crashed): exit 1. */
export class RunFailed extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 1, "RUN_FAILED", options);
    this.name = "RunFailed";
  }
}

/** Parses a positive integer flag value, naming the flag when it is not one. */
export function positiveInt(flag: string): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < 1)
      throw new UsageError(`${flag} must be a positive integer (got '${value}')`);
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

/** Parses an integer flag value in [min, max], naming the flag and the range when it is not one. */
export function intInRange(flag: string, min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value.trim());
    if (!/^\d+$/.test(value.trim()) || n < min || n > max)
      throw new UsageError(`${flag} must be an integer from ${min} to ${max} (got '${value}')`);
    return n;
  };
}

/** Parses a non-negative number flag value (fractions allowed), naming the flag when it is not one. */
export function nonNegativeNumber(flag: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value.trim());
    if (value.trim() === "" || !Number.isFinite(n) || n < 0)
      throw new UsageError(`${flag} must be a number ≥ 0 (got '${value}')`);
    return n;
  };
}

/**
 * Parses a duration such as `3h`, `90m`, `1h30m`, `45s` (h, m, s parts in that order, whole numbers) into seconds ≥ 1.
 */
export function durationSpan(flag: string): (value: string) => number {
  return (value: string) => {
    const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value.trim());
    const seconds = m === null ? 0 : Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
    if (m === null || value.trim() === "" || seconds < 1)
      throw new UsageError(`${flag} must be a duration such as 3h, 90m, 1h30m or 45s (got '${value}')`);
    return seconds;
  };
}
