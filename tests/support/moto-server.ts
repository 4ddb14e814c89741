/**
 * An S3-compatible server for the backup/restore tests: moto in server mode (PyPI moto[server],
 * installed by .ci/setup into a venv and named by $MOTO_SERVER), started on a loopback address
 * with a free port. Also resolves the AWS CLI ($AWS_CLI, Debian's awscli). Outside CI a missing
 * tool skips the tests that need it, naming why; under CI=true it fails them instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createBucket, type S3Env } from "../../harness/backup/local-backup.js";
import { freePort } from "../../harness/local/ports.js";
import { trackChild } from "../../core/util/process-reaper.js";
import { pollUntil } from "../../core/util/poll-until.js";

/** Why the S3 tools are not usable (undefined: they are); throws under CI=true. */
export function s3ToolsMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const problems: string[] = [];
  for (const name of ["MOTO_SERVER", "AWS_CLI"]) {
    const path = env[name];
    if (path === undefined || path === "") problems.push(`${name} is not set`);
    else {
      try {
        accessSync(path, constants.X_OK);
      } catch {
        problems.push(`${name}=${path} is not executable`);
      }
    }
  }
  if (problems.length === 0) return undefined;
  const why = `${problems.join("; ")} (run through .ci/setup, which installs Debian's awscli and moto[server] from PyPI)`;
  if (env.CI === "true") throw new Error(`backup/restore tests need the S3 tools: ${why}`);
  return why;
}

export interface MotoServer {
  url: string;
  stop(): Promise<void>;
}

export async function startMoto(
  host: string,
  server: string = process.env.MOTO_SERVER ?? "moto_server",
): Promise<MotoServer> {
  const port = await freePort(host);
  const child: ChildProcess = spawn(server, ["-H", host, "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  trackChild(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const url = `http://${host}:${port}`;
  await pollUntil(
    async () => {
      if (exited) throw new Error(`moto_server exited: ${stderr.trim().split("\n").slice(-5).join(" | ")}`);
      const r = await fetch(`${url}/moto-api/`).catch((e: Error) => e);
      return r instanceof Error ? r.message : true;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `moto_server on ${url}` },
  );
  return {
    url,
    stop: async () => {
      if (exited) return;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exit;
      clearTimeout(t);
    },
  };
}

/** moto on `host` with `bucket` created: the S3 side of a local backup ($AWS_CLI, moto's dummy keys). */
export async function motoBucket(
  host: string,
  bucket: string,
  binDir: string,
): Promise<{ moto: MotoServer; s3: S3Env }> {
  const moto = await startMoto(host);
  const s3: S3Env = {
    awsCli: process.env.AWS_CLI as string,
    endpointUrl: moto.url,
    credentials: { AWS_ACCESS_KEY_ID: "testing", AWS_SECRET_ACCESS_KEY: "testing" },
  };
  await createBucket(s3, bucket, binDir);
  return { moto, s3 };
}
