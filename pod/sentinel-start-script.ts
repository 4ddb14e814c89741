/**
 * The Sentinel container's entrypoint (a POSIX sh script in the ConfigMap): `sentinel.conf`
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
import { shQuote } from "./sh-cli.js";

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
  const auth =
    o.passwordFile === undefined
      ? []
      : [
          `  password_file=${shQuote(o.passwordFile)}`,
          `  [ -r "$password_file" ] || fail "$password_file is not readable"`,
          `  password=$(cat "$password_file")`,
          `  [ -n "$password" ] || fail "the password in $password_file is empty"`,
          `  case "$password" in *"$nl"*) fail "the password must be a single line" ;; esac`,
          `  quoted=$(conf_quote "$password")`,
          `  printf 'requirepass %s\\nsentinel sentinel-pass %s\\nsentinel auth-pass %s %s\\n' "$quoted" "$quoted" "$master_name" "$quoted" >> "$state.tmp"`,
          `  unset password quoted`,
        ];
  const lines = [
    `#!/bin/sh`,
    `# Sentinel entrypoint, rendered by valkey-on-eks (see sentinel-start-script.ts).`,
    `set -eu`,
    `umask 077`,
    `fail() { echo "sentinel-start.sh: $*" >&2; exit 1; }`,
    `say() { echo "sentinel-start.sh: $*" >&2; }`,
    `nl='`,
    `'`,
    `conf_quote() { printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g')"; }`,
    `template=${shQuote(o.templateFile)}`,
    `state=${shQuote(o.stateFile)}`,
    `master_name=${shQuote(o.masterName)}`,
    `mkdir -p "$(dirname "$state")"`,
    `if [ ! -s "$state" ]; then`,
    `  say "first start: writing $state from $template"`,
    `  [ -r "$template" ] || fail "$template is not readable"`,
    `  [ -n "\${VALKEY_ANNOUNCE_HOST:-}" ] || fail "VALKEY_ANNOUNCE_HOST (this Sentinel's stable DNS name) is not set"`,
    `  cat "$template" > "$state.tmp"`,
    `  printf 'sentinel announce-ip %s\\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$state.tmp"`,
    ...auth,
    `  mv -f "$state.tmp" "$state"`,
    `else`,
    `  say "keeping the Sentinel state in $state"`,
    `fi`,
    `chmod 600 "$state"`,
    `primary=$(awk '$1 == "sentinel" && $2 == "monitor" { print $4; exit }' "$state")`,
    `[ -n "$primary" ] || fail "$state monitors no primary"`,
    // An address literal needs no lookup (getent hosts answers "not found" for an IP absent from /etc/hosts).
    `case "$primary" in *:*) literal=yes ;; *[!0-9.]*) literal=no ;; *) literal=yes ;; esac`,
    `if [ "$literal" = no ] && command -v getent >/dev/null 2>&1; then`,
    `  waited=0`,
    `  until getent hosts "$primary" >/dev/null 2>&1; do`,
    `    [ "$waited" -lt ${wait} ] || { say "$primary does not resolve after ${wait}s; starting anyway"; break; }`,
    `    sleep 1`,
    `    waited=$((waited + 1))`,
    `  done`,
    `fi`,
    `exec valkey-server "$state" --sentinel`,
  ];
  return lines.join("\n") + "\n";
}
