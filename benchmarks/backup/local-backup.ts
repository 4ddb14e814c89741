/**
 * backup.sh and restore.sh run locally, as a pod runs them: the rendered files written into a
 * directory and run with `sh`, the binaries and the S3 endpoint in the environment, the Valkey
 * password in VALKEYCLI_AUTH / REDISCLI_AUTH only. A restored member's launch (LocalFleet.start)
 * is `sh restore.sh fetch && sh restore.sh place && exec valkey-server valkey.conf` in its own directory: when the restore
 * fails the server never starts, and the start-up error carries restore.sh's message. The place
 * step's report (the pod's termination message) goes to `restoreMessageFile(dir)`.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseManifest, type BackupManifest } from "../../pod/backup-manifest.js";
import { renderBackupScript } from "../../pod/backup-script.js";
import { RESTORE_MESSAGE_ENV } from "../../pod/restore-message.js";
import { renderRestoreScript, type RestoreScriptOptions } from "../../pod/restore-script.js";
import { CLI_AUTH_ENV } from "../../pod/definition.js";
import { resolveBinaries } from "../binaries.js";
import { renderLocalValkeyConf, type LocalServerOptions } from "../local/valkey-config-file.js";
import { waitForReplicaLinks } from "../local/local-replication.js";
import type { LaunchContext, LaunchCommand, LocalFleet, ValkeyProcess } from "../local/valkey-process.js";
import { targetArg, type BackupPlan } from "./backup-plan.js";

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
    AWS_CLI: s3.awsCli,
    VALKEY_CLI: resolveBinaries().cli.path,
    VALKEY_CHECK_RDB: checkRdbBinary(binDir),
    // No profile or credentials file of this machine's user leaks in.
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    AWS_DEFAULT_REGION: "us-east-1",
    AWS_PAGER: "",
    ...s3.credentials,
  };
  if (s3.endpointUrl !== undefined) env.AWS_ENDPOINT_URL = s3.endpointUrl;
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

/** Where backup.sh takes its targets from: a plan made here, or `plan` in the script from a live seed (as the CronJob does). */
export type BackupSource =
  { plan: BackupPlan } | { seed: { mode: "cluster" | "replication"; host: string; port: number } };

function writeBackupScript(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const script = join(dir, "backup.sh");
  writeFileSync(script, renderBackupScript(), { mode: 0o600 });
  return script;
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
  const script = writeBackupScript(o.dir);
  const env = {
    ...process.env,
    ...scriptEnv(o.s3, join(o.dir, "bin"), o.password),
    BACKUP_WORK_DIR: join(o.dir, "work"),
    ...(o.allowPrimary ? { BACKUP_ALLOW_PRIMARY: "1" } : {}),
  };
  try {
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
  const script = writeBackupScript(o.dir);
  const work = join(o.dir, "work");
  const env = {
    ...process.env,
    ...scriptEnv(o.s3, join(o.dir, "bin"), o.password),
    BACKUP_WORK_DIR: work,
    BACKUP_URI: o.uri,
    ...(o.id ? { BACKUP_ID: o.id } : {}),
  };
  const args =
    "plan" in o
      ? ["all", o.plan.mode, ...o.plan.targets.map(targetArg)]
      : ["all-from", o.seed.mode, o.seed.host, String(o.seed.port)];
  const started = Date.now();
  try {
    const { stdout, stderr } = await run("sh", [script, ...args], { env, timeout: 600_000 });
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
  /** The release's peers (`host:port`) the place step asks whether the topology is already formed (RESTORE_PEERS). @default none */
  peers?: readonly string[];
}

/** Where a local member's place step writes its report (in a pod: the kubelet's termination log). */
export function restoreMessageFile(dir: string): string {
  return join(dir, "restore-place.message");
}

/** A LocalFleet `launch`: restore.sh's two steps (the pod's two init containers), then valkey-server, in the member's own directory (its data dir). */
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
    const script = join(ctx.dir, "restore.sh");
    writeFileSync(script, renderRestoreScript({ ...o.restore, dataDir: ctx.dir }), { mode: 0o600 });
    return {
      command: "sh",
      args: [
        "-c",
        'sh "$1" fetch && sh "$1" place && exec "$2" "$3"',
        "restore-then-start",
        script,
        resolveBinaries().server.path,
        conf,
      ],
      env: {
        // The password too: the place step asks the peers whether the topology is already formed.
        ...scriptEnv(o.s3, o.binDir, o.server.password),
        RESTORE_FROM: o.from,
        RESTORE_SHARD: String(o.shard),
        [RESTORE_MESSAGE_ENV]: restoreMessageFile(ctx.dir),
        ...(o.peers === undefined ? {} : { RESTORE_PEERS: o.peers.join(" ") }),
      },
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
