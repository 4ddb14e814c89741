/**
 * Runs the replication members' rendered preStop (components/valkey/replication-prestop-script.ts)
 * with `sh` against one member of a local SentinelTopology, as the kubelet runs it in the pod:
 * the password reaches it in the environment (REDISCLI_AUTH), never argv. Used by the
 * switchover drill and the HAProxy check measurement.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { renderReplicationPreStopScript } from "../../pod/replication-prestop-script.js";
import { resolveBinaries } from "../binaries.js";
import type { Member, SentinelTopology } from "./sentinel-topology.js";

/** Resolves with the script's stderr (its log); rejects when it fails or outlives its bound. */
export async function runReplicationPreStop(t: SentinelTopology, m: Member, password: string | undefined, timeoutSeconds = 20): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "valkey-prestop-"));
  const file = join(dir, "prestop.sh");
  try {
    const script = renderReplicationPreStopScript({
      masterName: t.masterName,
      sentinels: t.sentinels.map((s) => s.address),
      port: m.port,
      localHost: m.host,
      timeoutSeconds,
    });
    writeFileSync(file, script, { mode: 0o600 });
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", VALKEY_CLI: resolveBinaries().cli.path, VALKEY_ANNOUNCE_HOST: m.host };
    if (password !== undefined) env.REDISCLI_AUTH = password;
    const { stderr } = await promisify(execFile)("sh", [file], { env, timeout: (timeoutSeconds + 15) * 1000 });
    return stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
