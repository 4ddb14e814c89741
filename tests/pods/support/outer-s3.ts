/**
 * An S3-compatible server for the real-pod backup and restore checks: moto[server] (.ci/setup's
 * $MOTO_SERVER) started in kube:local's outer network namespace on the bridge address every node
 * routes to, so pods reach it as they would reach a MinIO outside the cluster, and the AWS CLI
 * ($AWS_CLI) run against it from that namespace.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { API_IP, OUTER_NETNS } from "../../../apps/kube-local/plan.js";
import { pollUntil } from "../../../core/util/poll-until.js";
import { trackChild } from "../../../core/util/process-reaper.js";
import { s3ToolsMissing } from "../../support/moto-server.js";

/** The keys the pods get from the user's Secret (`backup.credentialsSecret`); moto accepts any. */
export const S3_KEYS = {
  AWS_ACCESS_KEY_ID: "pods-backup",
  AWS_SECRET_ACCESS_KEY: "pods-backup-secret",
  AWS_DEFAULT_REGION: "us-west-2",
};

/** One server: its endpoint as the pods reach it, and the AWS CLI against it. */
export interface OuterS3 {
  endpoint: string;
  /** `aws --endpoint-url ENDPOINT ARGS` run in the outer namespace; stdout, or throws with stderr. */
  aws: (args: string[], input?: Buffer) => Buffer;
  stop: () => void;
}

/**
 * Starts a server on `port` of the outer namespace (one nothing else listens on: the API server
 * is on 6443); throws naming what .ci/setup did not install.
 */
export async function startOuterS3(port: number): Promise<OuterS3> {
  const endpoint = `http://${API_IP}:${port}`;
  const aws = (args: string[], input?: Buffer): Buffer => {
    const r = spawnSync(
      "nsenter",
      [`--net=/run/netns/${OUTER_NETNS}`, "--", process.env.AWS_CLI as string, "--endpoint-url", endpoint, ...args],
      {
        env: { ...process.env, ...S3_KEYS },
        maxBuffer: 64 << 20,
        input,
      },
    );
    if (r.status !== 0) throw new Error(`aws ${args.join(" ")}: ${r.stderr.toString().trim()}`);
    return r.stdout;
  };
  const missing = s3ToolsMissing();
  if (missing !== undefined) throw new Error(`the backup and restore on real pods need ${missing}`);
  const moto: ChildProcess = spawn(
    "nsenter",
    [`--net=/run/netns/${OUTER_NETNS}`, "--", process.env.MOTO_SERVER as string, "-H", API_IP, "-p", String(port)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  trackChild(moto);
  await pollUntil(
    () => {
      try {
        aws(["s3api", "list-buckets"]);
        return Promise.resolve(true);
      } catch (e) {
        return Promise.resolve((e as Error).message);
      }
    },
    { timeoutMs: 30_000, intervalMs: 250, what: `moto_server on ${endpoint} in ${OUTER_NETNS}` },
  );
  return { endpoint, aws, stop: () => void moto.kill("SIGTERM") };
}
