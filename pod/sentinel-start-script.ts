/**
 * The Sentinel container's entrypoint (pod/scripts/sentinel-start.sh, in the ConfigMap): `sentinel.conf`
 * lives on the Sentinel's own volume, because Sentinel rewrites it with its state (epochs, the
 * current primary, known replicas and peers) and a restart must keep that state. So:
 *
 * - First start (no state file): the file is written from the ConfigMap's template
 *   (sentinel-conf.ts, no secret in it) plus the per-pod and secret lines: `sentinel
 *   announce-ip` = this pod's stable DNS name ($VALKEY_ANNOUNCE_HOST), and with auth
 *   `requirepass`, `sentinel sentinel-pass`, `sentinel auth-pass <master>` from the mounted
 *   password file (file → shell variable → builtin printf: never argv, never the manifest).
 * - Every start: `umask 077` before anything is written, so the file and Sentinel's own
 *   rewrites of it (created `0644 & ~umask`) stay private; then wait, bounded, until the
 *   monitored primary's name resolves (with `resolve-hostnames yes` Sentinel refuses a config
 *   whose names do not resolve; an IP address is not looked up), and exec
 *   `valkey-server <state file> --sentinel`.
 *
 * A password change therefore needs the state file re-made (delete the Sentinel's PVC); the
 * data members read the password at every start.
 */
import { renderShellFile } from "./shell-file.js";

export interface SentinelStartScriptOptions {
  /** The template in the ConfigMap (first start only). */
  templateFile: string;
  /** The state file on the Sentinel's volume. */
  stateFile: string;
  masterName: string;
  /** The password file (auth on); undefined = no auth lines. */
  passwordFile: string | undefined;
  /** Seconds to wait for the monitored primary's name to resolve. @default 60 */
  resolveWaitSeconds?: number;
}

export function renderSentinelStartScript(o: SentinelStartScriptOptions): string {
  const wait = o.resolveWaitSeconds ?? 60;
  if (!Number.isInteger(wait) || wait < 1)
    throw new Error(`sentinel start: resolveWaitSeconds must be a whole number ≥ 1 (got ${wait})`);
  if (!/^[A-Za-z0-9._-]+$/.test(o.masterName))
    throw new Error(`sentinel start: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  return renderShellFile("sentinel-start.sh", {
    template: o.templateFile,
    state: o.stateFile,
    master_name: o.masterName,
    password_file: o.passwordFile ?? "",
    resolve_wait: wait,
  });
}
