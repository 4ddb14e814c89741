/**
 * The bounded valkey-cli call shared by the in-pod scripts (heal, readiness, preStop): every call
 * runs under `timeout`, which bounds the connect and the command together, so a peer that
 * accepts TCP but never answers (or a SYN into a dead address) cannot hang the script. The
 * password comes from VALKEYCLI_AUTH / REDISCLI_AUTH in the environment, never from argv.
 * `$VALKEY_CLI` names the binary (tests point it at the client this machine has). stdin is
 * /dev/null: a call inside a `while read` loop must not eat the loop's input.
 */

/** Seconds one valkey-cli call may take, connect included. */
export const DEFAULT_CLI_TIMEOUT_SECONDS = 3;
/** In a pod the server listens on every address; local tests bind one loopback address each. */
export const DEFAULT_LOCAL_HOST = "127.0.0.1";

/** A host for `local_host`: an IPv4/IPv6 literal or a DNS name, nothing sh would expand. */
export function localHost(host: string = DEFAULT_LOCAL_HOST): string {
  if (!/^[A-Za-z0-9.:-]+$/.test(host))
    throw new Error(`local host must be an address or DNS name, got ${JSON.stringify(host)}`);
  return host;
}

/** `local_host=...` (see localHost). */
export function localHostLine(host: string = DEFAULT_LOCAL_HOST): string {
  return `local_host=${localHost(host)}`;
}

/** The bound of one valkey-cli call (`cli_timeout`), a whole number of seconds >= 1. */
export function cliTimeout(timeoutSeconds: number = DEFAULT_CLI_TIMEOUT_SECONDS): number {
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) {
    throw new Error(`cli timeout must be a whole number of seconds >= 1, got ${timeoutSeconds}`);
  }
  return timeoutSeconds;
}

/**
 * sh lines defining `cli <args>` (bounded valkey-cli) and `local_cli <args>` (the same against
 * this pod's own server on $local_host:$port). Needs `port` and `local_host` set before use.
 */
export function boundedCliLines(timeoutSeconds: number = DEFAULT_CLI_TIMEOUT_SECONDS): string[] {
  cliTimeout(timeoutSeconds);
  return [
    `cli_bin="\${VALKEY_CLI:-valkey-cli}"`,
    `cli_timeout=${timeoutSeconds}`,
    `if command -v timeout >/dev/null 2>&1; then`,
    `  cli() { timeout "$cli_timeout" "$cli_bin" "$@" </dev/null; }`,
    `else`,
    `  echo "$0: no timeout command: client calls are unbounded" >&2`,
    `  cli() { "$cli_bin" "$@" </dev/null; }`,
    `fi`,
    `local_cli() { cli -h "$local_host" -p "$port" "$@"; }`,
  ];
}

/** Single-quotes a value for sh. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
