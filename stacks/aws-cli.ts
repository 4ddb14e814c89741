/**
 * The AWS CLI as the reads outside Pulumi use it (byo's AMI check, `vbench aws-check`): one call
 * per read, JSON out, the stack's region and profile, an optional endpoint (a local AWS such as
 * moto). A failure is the first line the CLI printed on stderr, so a caller can tell
 * "not found" from "not allowed".
 */
import { spawnSync } from "node:child_process";
import type { StackConfig } from "../config/types.js";

export type AwsCliResult = { ok: true; json: unknown } | { ok: false; error: string };

/** Runs one `aws <args>` read and parses its JSON output. */
export type AwsCli = (args: readonly string[]) => AwsCliResult;

/** The value at `path` in an aws CLI answer (objects only), or undefined where a step is missing. */
export const jsonField = (json: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined),
    json,
  );

export interface AwsCliOptions {
  region: string;
  profile?: string;
  /** `--endpoint-url` for every call (a local AWS API, e.g. moto). */
  endpointUrl?: string;
  /** @default 30000 */
  timeoutMs?: number;
}

/** An {@link AwsCli} running `aws` (no shell) with the region, profile and endpoint of `o`. */
export function awsCli(o: AwsCliOptions, run: typeof spawnSync = spawnSync): AwsCli {
  return (args) => {
    const full = [...args, "--region", o.region, "--output", "json"];
    if (o.profile !== undefined) full.push("--profile", o.profile);
    if (o.endpointUrl !== undefined) full.push("--endpoint-url", o.endpointUrl);
    const result = run("aws", full, { encoding: "utf8", timeout: o.timeoutMs ?? 30_000 });
    if (result.error)
      return {
        ok: false,
        error:
          (result.error as NodeJS.ErrnoException).code === "ENOENT" ? "`aws` is not on PATH" : result.error.message,
      };
    if (result.status !== 0) {
      const first = String(result.stderr ?? "")
        .trim()
        .split("\n")
        .find((l) => l.trim() !== "");
      return { ok: false, error: first ?? `exit ${String(result.status)}` };
    }
    const out = String(result.stdout ?? "").trim();
    try {
      return { ok: true, json: out === "" ? {} : (JSON.parse(out) as unknown) };
    } catch {
      return { ok: false, error: `aws ${args.slice(0, 2).join(" ")} printed no JSON: ${out.slice(0, 120)}` };
    }
  };
}

/** The AWS CLI options a stack file gives (its region and profile), and an endpoint override. */
export function cliOptionsOf(config: StackConfig, endpointUrl?: string): AwsCliOptions {
  return {
    region: config.aws.region,
    ...(config.aws.profile === undefined ? {} : { profile: config.aws.profile }),
    ...(endpointUrl === undefined ? {} : { endpointUrl }),
  };
}
