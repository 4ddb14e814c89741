/**
 * The values of the bounded valkey-cli call the pod scripts share (pod/scripts/lib-cli.sh): every
 * call runs under `timeout`, which bounds the connect and the command together, so a peer that
 * accepts TCP but never answers (or a SYN into a dead address) cannot hang the script. The
 * password comes from VALKEYCLI_AUTH / REDISCLI_AUTH in the environment, never from argv.
 * `$VALKEY_CLI` names the binary (tests point it at the client this machine has).
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

/** The bound of one valkey-cli call (`cli_timeout`), a whole number of seconds >= 1. */
export function cliTimeout(timeoutSeconds: number = DEFAULT_CLI_TIMEOUT_SECONDS): number {
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) {
    throw new Error(`cli timeout must be a whole number of seconds >= 1, got ${timeoutSeconds}`);
  }
  return timeoutSeconds;
}

/** Single-quotes a value for sh. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
