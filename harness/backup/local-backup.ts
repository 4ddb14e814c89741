/**
 * backup.sh and restore.sh run locally, as a pod runs them: the rendered files written into a
 * directory and run with `sh`, the binaries and the S3 endpoint in the environment, the Valkey
 * password in VALKEYCLI_AUTH / REDISCLI_AUTH only. A restored member's launch (LocalFleet.start)
 * is `sh restore.sh fetch && sh restore.sh place && exec valkey-server valkey.conf` in its own directory: when the
 * restore
 * fails the server never starts, and the start-up error carries restore.sh's message. The place
 * step's report (the pod's termination message) goes to `restoreMessageFile(dir)`.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseManifest, type BackupManifest } from "../../pod/backup-manifest.js";
import { BACKUP_ENV, BACKUP_SCRIPT, backupPod, type BackupTargets } from "../../pod/backup-pod.js";
import { RESTORE_ENV, restorePod } from "../../pod/restore-pod.js";
import type { RestoreScriptOptions } from "../../pod/restore-script.js";
import { requireStepEnv, type ScriptStep } from "../../pod/script-step.js";
import { CLI_AUTH_ENV } from "../../pod/definition.js";
import { shQuote } from "../../pod/sh-cli.js";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { renderLocalValkeyConf, type LocalServerOptions } from "../local/valkey-config-file.js";
import { waitForReplicaLinks } from "../local/local-replication.js";
import type { LaunchContext, LaunchCommand, LocalFleet, ValkeyProcess } from "../local/valkey-process.js";
import { targetArg, type BackupPlan } from "../../core/backup/backup-plan.js";

const run = promisify(execFile);

/** The S3 side of a local run: the CLI, the endpoint (an S3-compatible server) and its credentials. */
export interface S3Env {
  awsCli: string;
  endpointUrl?: string;
  /** AWS_* credential variables (a local server's dummy keys); in a pod: none, Pod Identity. */
  credentials?: Record<string, string>;
}

/** valkey-check-rdb: valkey-server run under that name (it checks its argv[0]), in `dir`. */
export function checkRdbBinary(dir: string, server: string = resolveBinaries().server.path): string {
  const path = join(dir, "valkey-check-rdb");
  mkdirSync(dir, { recursive: true });
  if (!existsSync(path)) symlinkSync(server, path);
  return path;
}

/** The environment backup.sh / restore.sh read, locally. */
export function scriptEnv(s3: S3Env, binDir: string, password: string | undefined): Record<string, string> {
  const env: Record<string, string> = {
    [BACKUP_ENV.awsCli]: s3.awsCli,
    [BACKUP_ENV.cli]: resolveBinaries().cli.path,
    [BACKUP_ENV.checkRdb]: checkRdbBinary(binDir),
    // No profile or credentials file of this machine's user leaks in.
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    AWS_DEFAULT_REGION: "us-east-1",
    AWS_PAGER: "",
    ...s3.credentials,
  };
  if (s3.endpointUrl !== undefined) env[BACKUP_ENV.endpoint] = s3.endpointUrl;
  if (password !== undefined) for (const name of CLI_AUTH_ENV) env[name] = password;
  return env;
}

export interface LocalBackupResult {
  /** s3://bucket/prefix/<id> (no trailing slash). */
  uri: string;
  manifest: BackupManifest;
  stderr: string;
  durationMs: number;
}

/**
 * Where backup.sh takes its targets from: a plan made here, or `plan` in the script from a live seed (as the CronJob
 * does).
 */
export type BackupSource =
  { plan: BackupPlan } | { seed: { mode: "cluster" | "replication"; host: string; port: number } };

/** The files of a definition, written into `dir` (owner-only). */
function writeFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
}

/** Runs `step` of a definition with `env` (its script's variables checked first), within `timeout` ms. */
async function runStep(what: string, step: ScriptStep, env: NodeJS.ProcessEnv, timeout: number) {
  requireStepEnv(
    what,
    step,
    Object.keys(env).filter((k) => env[k] !== undefined),
  );
  const [cmd, ...args] = step.command as [string, ...string[]];
  return run(cmd, args, { env, timeout });
}

/** backup.sh's own plan (`backup.sh plan MODE HOST PORT`): one target argument per shard. */
export async function planWithScript(o: {
  dir: string;
  mode: "cluster" | "replication";
  host: string;
  port: number;
  s3: S3Env;
  password?: string;
  allowPrimary?: boolean;
}): Promise<string[]> {
  writeFiles(o.dir, backupPod({ mode: o.mode, from: { seed: o }, configDir: o.dir }).files);
  const env = {
    ...process.env,
    ...scriptEnv(o.s3, join(o.dir, "bin"), o.password),
    [BACKUP_ENV.workDir]: join(o.dir, "work"),
    ...(o.allowPrimary ? { [BACKUP_ENV.allowPrimary]: "1" } : {}),
  };
  try {
    // `plan` is no step of the pod (its snapshot-from plans, then snapshots): asked here on its own.
    const script = join(o.dir, BACKUP_SCRIPT);
    const { stdout } = await run("sh", [script, "plan", o.mode, o.host, String(o.port)], { env, timeout: 60_000 });
    return stdout.split("\n").filter((l) => l !== "");
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`backup.sh plan failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}

/** Runs `backup.sh all` (or `all-from` a seed); the manifest it wrote is parsed (and so validated) here. */
export async function runLocalBackup(
  o: BackupSource & { dir: string; uri: string; id?: string; s3: S3Env; password?: string },
): Promise<LocalBackupResult> {
  const [mode, from]: [BackupManifest["mode"], BackupTargets] =
    "plan" in o
      ? [o.plan.mode, { targets: o.plan.targets.map(targetArg) }]
      : [o.seed.mode, { seed: { host: o.seed.host, port: o.seed.port } }];
  const pod = backupPod({ mode, from, configDir: o.dir });
  writeFiles(o.dir, pod.files);
  const work = join(o.dir, "work");
  const env = {
    ...process.env,
    ...scriptEnv(o.s3, join(o.dir, "bin"), o.password),
    [BACKUP_ENV.workDir]: work,
    [BACKUP_ENV.uri]: o.uri,
    ...(o.id ? { [BACKUP_ENV.id]: o.id } : {}),
  };
  const started = Date.now();
  try {
    const { stdout, stderr } = await runStep("local backup", pod.all, env, 600_000);
    const uri = stdout.trim().replace(/\/$/, "");
    const manifest = parseManifest(readFileSync(join(work, "manifest.json"), "utf8"), `${uri}/manifest.json`);
    return { uri, manifest, stderr, durationMs: Date.now() - started };
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`backup.sh failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}

export interface RestoredMemberOptions {
  restore: RestoreScriptOptions;
  /** s3://bucket/prefix/<id>. */
  from: string;
  /** A shard number, or "none" (starts empty). */
  shard: number | "none";
  s3: S3Env;
  /** The valkey.conf options besides port, dir and logfile. */
  server: Omit<LocalServerOptions, "port" | "clusterPort" | "dir" | "logfile">;
  binDir: string;
  /**
   * The release's peers (`host:port`) the place step asks whether the topology is already formed (RESTORE_PEERS).
   * @default none
   */
  peers?: readonly string[];
}

/** Where a local member's place step writes its report (in a pod: the kubelet's termination log). */
export function restoreMessageFile(dir: string): string {
  return join(dir, "restore-place.message");
}

/**
 * A LocalFleet `launch`: restore.sh's two steps (the pod's two init containers), then valkey-server, in the member's
 * own directory (its data dir).
 */
export function restoredMemberLaunch(o: RestoredMemberOptions): (ctx: LaunchContext) => LaunchCommand {
  return (ctx) => {
    const conf = join(ctx.dir, "valkey.conf");
    writeFileSync(
      conf,
      renderLocalValkeyConf({
        ...o.server,
        port: ctx.port,
        clusterPort: ctx.clusterPort,
        dir: ctx.dir,
        logfile: ctx.logfile,
      }),
      {
        mode: 0o600,
      },
    );
    const pod = restorePod({ ...o.restore, dataDir: ctx.dir, configDir: ctx.dir });
    writeFiles(ctx.dir, pod.files);
    const env = {
      // The password too: the place step asks the peers whether the topology is already formed.
      ...scriptEnv(o.s3, o.binDir, o.server.password),
      [RESTORE_ENV.from]: o.from,
      [RESTORE_ENV.shard]: String(o.shard),
      [RESTORE_ENV.messageFile]: restoreMessageFile(ctx.dir),
      ...(o.peers === undefined ? {} : { [RESTORE_ENV.peers]: o.peers.join(" ") }),
    };
    for (const [name, step] of Object.entries({ fetch: pod.fetch, place: pod.place })) {
      requireStepEnv(`local restore ${name}`, step, Object.keys(env));
    }
    // The pod's two init containers, then the server; the server never starts when either fails.
    const line = (step: ScriptStep) => step.command.map(shQuote).join(" ");
    return {
      command: "sh",
      args: [
        "-c",
        `${line(pod.fetch)} && ${line(pod.place)} && exec "$1" "$2"`,
        "restore-then-start",
        resolveBinaries().server.path,
        conf,
      ],
      env,
    };
  };
}

/**
 * Replication mode restored locally, as a new stack's members do: one member restoring shard 0
 * started first (it becomes the primary), then one restoring it too as its replica; resolves once
 * the replica's link is up. AOF off. Names: `<prefix>-0`, `<prefix>-1`.
 */
export async function startRestoredReplication(
  fleet: LocalFleet,
  o: { from: string; s3: S3Env; binDir: string; password: string; prefix: string },
): Promise<{ primary: ValkeyProcess; replica: ValkeyProcess }> {
  const launch = (replicaOf?: { host: string; port: number }) =>
    restoredMemberLaunch({
      restore: { mode: "replication" },
      from: o.from,
      shard: 0,
      s3: o.s3,
      server: { password: o.password, appendonly: false, replicaOf },
      binDir: o.binDir,
    });
  const primary = await fleet.start({ name: `${o.prefix}-0`, launch: launch() });
  const replica = await fleet.start({
    name: `${o.prefix}-1`,
    launch: launch({ host: primary.host, port: primary.port }),
  });
  await waitForReplicaLinks([replica], o.password, 30_000);
  return { primary, replica };
}

/** `aws s3api create-bucket` (a local S3-compatible server's bucket; deployed, the stack's bucket). */
export async function createBucket(s3: S3Env, bucket: string, binDir: string): Promise<void> {
  const env = { ...process.env, ...scriptEnv(s3, binDir, undefined) };
  const endpoint = s3.endpointUrl === undefined ? [] : ["--endpoint-url", s3.endpointUrl];
  await run(s3.awsCli, [...endpoint, "s3api", "create-bucket", "--bucket", bucket], { env, timeout: 60_000 });
}
