/**
 * The container engine the images check pulls and runs with: docker, or podman (the same
 * commands). `runArgs` is pure: a variable whose value is a secret is passed by name only (`-e
 * NAME`, the engine reads it from this process's environment), never on argv.
 */
import { spawnSync } from "node:child_process";

export type EngineName = "docker" | "podman";
export const ENGINES: readonly EngineName[] = ["docker", "podman"];

export interface RunSpec {
  image: string;
  /** Replaces the image's entrypoint. @default the image's */
  entrypoint?: string;
  args: readonly string[];
  /** Values on argv: never a secret. @default {} */
  env?: Readonly<Record<string, string>>;
  /** Names passed through from this process's environment (secrets). @default [] */
  passEnv?: readonly string[];
  /** Host paths mounted read-only. @default [] */
  mounts?: readonly { host: string; path: string }[];
  /** Empty writable directories (a pod's emptyDir). @default [] */
  tmpfs?: readonly string[];
  user?: string;
  readOnly?: boolean;
  /** Join another container's network namespace (a pod's shared localhost). @default undefined (see isolated) */
  joinNetworkOf?: string;
  /** A network namespace of its own with loopback only (no bridge, no port of the host). @default false */
  isolated?: boolean;
  /** A detached container's name. @default undefined (run in the foreground, removed after) */
  name?: string;
}

/** The engine's arguments for `run`. */
export function runArgs(spec: RunSpec): string[] {
  const a = ["run", ...(spec.name === undefined ? ["--rm"] : ["-d", "--name", spec.name])];
  if (spec.joinNetworkOf !== undefined) a.push("--network", `container:${spec.joinNetworkOf}`);
  else if (spec.isolated === true) a.push("--network", "none");
  if (spec.entrypoint !== undefined) a.push("--entrypoint", spec.entrypoint);
  if (spec.user !== undefined) a.push("--user", spec.user);
  if (spec.readOnly === true) a.push("--read-only");
  for (const t of spec.tmpfs ?? []) a.push("--tmpfs", t);
  for (const m of spec.mounts ?? []) a.push("-v", `${m.host}:${m.path}:ro`);
  for (const [k, v] of Object.entries(spec.env ?? {})) a.push("-e", `${k}=${v}`);
  for (const k of spec.passEnv ?? []) a.push("-e", k);
  return [...a, spec.image, ...spec.args];
}

export interface Ran {
  status: number;
  stdout: string;
  stderr: string;
}

export class Engine {
  constructor(
    readonly name: EngineName,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Runs the engine; `timeoutMs` bounds it (then status -1). */
  call(args: readonly string[], timeoutMs = 120_000): Ran {
    const r = spawnSync(this.name, args, { env: this.env, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 << 20 });
    if (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error(`${this.name} is not installed (--engine docker|podman)`);
    return { status: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  }

  /** Pulls a reference; plain HTTP registries need podman's --tls-verify=false (docker allows 127.0.0.0/8 itself). */
  pull(ref: string, insecure: boolean, timeoutMs = 900_000): Ran {
    const flags = insecure && this.name === "podman" ? ["--tls-verify=false"] : [];
    return this.call(["pull", "--quiet", ...flags, ref], timeoutMs);
  }

  run(spec: RunSpec, timeoutMs = 120_000): Ran {
    return this.call(runArgs(spec), timeoutMs);
  }

  exec(container: string, args: readonly string[], passEnv: readonly string[] = []): Ran {
    return this.call(["exec", ...passEnv.flatMap((k) => ["-e", k]), container, ...args]);
  }

  logs(container: string): string {
    const r = this.call(["logs", container]);
    return `${r.stdout}${r.stderr}`;
  }

  remove(container: string): void {
    this.call(["rm", "-f", container], 60_000);
  }
}

/** The engine to use: the one asked for, else the first whose daemon answers (`info`). */
export function chooseEngine(asked: string | undefined, env: NodeJS.ProcessEnv = process.env): Engine {
  if (asked !== undefined) {
    if (!(ENGINES as readonly string[]).includes(asked))
      throw new Error(`--engine must be ${ENGINES.join(" or ")} (got ${JSON.stringify(asked)})`);
    return new Engine(asked as EngineName, env);
  }
  for (const name of ENGINES) {
    const r = spawnSync(name, ["info"], { env, encoding: "utf8", timeout: 30_000 });
    if (r.status === 0) return new Engine(name, env);
  }
  throw new Error("neither docker nor podman answers `info` here: start one, or name it with --engine");
}
