/**
 * The framing the benchmark Job prints around each benchmark run, shared by the script builder
 * (components/benchmark/job-script.ts), the in-pod mix runner (mix-job-main.ts) and the log parser
 * (components/benchmark/job-log.ts) so they cannot drift apart.
 *
 *   ### vbench-version client=valkey-benchmark 9.0.2
 *   ### vbench-auth method=env|argv|none
 *   ### vbench-cpus nproc=2 quota=max period=100000   (the CPUs the pod may use, its cgroup quota)
 *   ### vbench-begin test=set round=1 run=1 requests=500000
 *   "test","rps",...            (the client's --csv stdout, verbatim)
 *   ### vbench-end test=set round=1 run=1 exit=0 wall_ms=1234 cpu_ms=2100
 *   ### vbench-stderr <a line of the client's stderr>
 *   ### vbench-error <why the script stopped>
 *   ### vbench-sample {"t_s":5,…}       (a soak: one sample per line, before the result, mix-job.ts)
 *   ### vbench-result {"rows":[…],…}   (a mix: the whole result as one JSON line, mix-job.ts)
 *   ### vbench-done status=0
 */

/** Every frame line starts with this. */
export const FRAME_PREFIX = "### vbench-";

/** Name of the container environment variable the password arrives in (secretKeyRef). */
export const PASSWORD_ENV = "VALKEY_PASSWORD";

export type FrameKind =
  "version" | "auth" | "cpus" | "begin" | "end" | "stderr" | "error" | "sample" | "result" | "done";

export interface Frame {
  kind: FrameKind;
  /** `key=value` pairs; for `version` the value runs to the end of the line. */
  fields: Record<string, string>;
  /** Everything after the kind, for `stderr` / `error` / `sample` / `result`. */
  text: string;
}

const KINDS = new Set<string>([
  "version",
  "auth",
  "cpus",
  "begin",
  "end",
  "stderr",
  "error",
  "sample",
  "result",
  "done",
]);

/** The frame on this line, or undefined for a line that is not one. */
export function parseFrame(line: string): Frame | undefined {
  if (!line.startsWith(FRAME_PREFIX)) return undefined;
  const rest = line.slice(FRAME_PREFIX.length);
  const space = rest.indexOf(" ");
  const kind = space < 0 ? rest : rest.slice(0, space);
  if (!KINDS.has(kind)) return undefined;
  const text = space < 0 ? "" : rest.slice(space + 1);
  const fields: Record<string, string> = {};
  if (kind === "version") {
    const m = /^client=(.*)$/.exec(text);
    if (m?.[1] !== undefined) fields.client = m[1].trim();
  } else if (kind !== "stderr" && kind !== "error" && kind !== "sample" && kind !== "result") {
    for (const m of text.matchAll(/(\w+)=(\S*)/g)) if (m[1] !== undefined) fields[m[1]] = m[2] ?? "";
  }
  return { kind: kind as FrameKind, fields, text };
}
