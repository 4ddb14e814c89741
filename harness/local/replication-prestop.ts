/**
 * Runs the preStop a member of a local SentinelTopology was started with (the prestop.sh of its
 * pod definition, pod/replication-member.ts, in its dir) with `sh`, as the kubelet runs it in the pod:
 * the password reaches it in the environment (REDISCLI_AUTH), never argv; its log also goes to the
 * member's data dir (PRESTOP_LOG_FILE), as in a pod. Used by the
 * switchover drill and the HAProxy check measurement.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { PRESTOP_LOG_FILE, PRESTOP_SCRIPT_KEY } from "../../pod/paths.js";
import { localPodEnv } from "./pod-files.js";
import { type Member } from "./sentinel-topology.js";
import { REPLICATION_PRESTOP_TIMEOUT_SECONDS } from "./replication-launch.js";

/** Resolves with the script's stderr (its log); rejects when it fails or outlives its bound. */
export async function runReplicationPreStop(m: Member, password: string | undefined): Promise<string> {
  if (m.dataDir === "") throw new Error(`${m.name} has not started: no prestop.sh written yet`);
  const file = join(dirname(m.dataDir), PRESTOP_SCRIPT_KEY);
  const env = { ...localPodEnv(password), VALKEY_ANNOUNCE_HOST: m.host };
  const { stderr } = await promisify(execFile)("sh", [file, join(m.dataDir, PRESTOP_LOG_FILE)], {
    env,
    timeout: (REPLICATION_PRESTOP_TIMEOUT_SECONDS + 15) * 1000,
  });
  return stderr;
}
