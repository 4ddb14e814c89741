/**
 * The HAProxy health checks of the endpoints (haproxy-cfg.ts renders them into backends). Pure.
 * Every command goes out as a RESP array in hex (`tcp-check send-binary`): any password byte
 * works and nothing needs escaping for the cfg syntax. A reply that does not match must fail the
 * check at once, not after the check timeout: `tcp-check expect` waits for more data while the
 * connection is open (HAProxy 2.6 configuration manual, "tcp-check expect", min-recv). The member
 * check sends its last command together with QUIT (the server answers and closes); Sentinel has
 * no QUIT, see sentinelNamesCheck.
 * HAProxy docs: https://docs.haproxy.org/2.6/configuration.html#4.2-tcp-check%20connect and
 * #4.2-tcp-check%20expect (`binary` = the exact bytes appear in the response buffer).
 */

export function hex(text: string): string {
  return Buffer.from(text, "utf8").toString("hex");
}

/** A RESP bulk string, `$<bytes>\r\n<text>\r\n`. */
function bulk(text: string): string {
  return `$${Buffer.byteLength(text, "utf8")}\r\n${text}\r\n`;
}

/** A command as a RESP array, in hex. */
export function commandHex(...args: string[]): string {
  return hex(`*${args.length}\r\n${args.map(bulk).join("")}`);
}

/** `*2\r\n$4\r\nAUTH\r\n$<n>\r\n<password>\r\n` in hex. */
export function authCommandHex(password: string): string {
  return commandHex("AUTH", password);
}

/**
 * The reply of `SENTINEL GET-MASTER-ADDR-BY-NAME` naming `host:port`, in hex: a two-element
 * array of bulk strings. The length prefixes make it exact: `127.0.0.2` never matches
 * `127.0.0.21`, a name never matches a longer name.
 */
export function masterAddrReplyHex(host: string, port: number): string {
  return hex(`*2\r\n${bulk(host)}${bulk(String(port))}`);
}

/** The RESP bulk string of `text` in hex (what a stand-in rewrites when it swaps a name for an IP). */
export function bulkHex(text: string): string {
  return hex(bulk(text));
}

const QUIT = "*1\r\n$4\r\nQUIT\r\n";

/** A complete reply to GET-MASTER-ADDR-BY-NAME (cfg text): `*2` with two bulk strings, `*-1`, or an error. */
const COMPLETE_REPLY = "^([*]2\\r\\n[$][0-9]+\\r\\n[^\\r]*\\r\\n[$][0-9]+\\r\\n[0-9]+|[*]-1|-[^\\r]*)\\r\\n";

function login(password: string | undefined): string[] {
  return password === undefined
    ? []
    : [`  tcp-check send-binary ${authCommandHex(password)}`, `  tcp-check expect string +OK`];
}

/** A data member's check: logs in, PINGs, and passes only while `INFO replication` says `role:<role>`. */
export function roleCheck(role: "master" | "slave", password: string | undefined): string[] {
  return [
    `  option tcp-check`,
    `  tcp-check connect`,
    ...login(password),
    `  tcp-check send-binary ${commandHex("PING")}`,
    `  tcp-check expect string +PONG`,
    `  tcp-check send-binary ${hex(`*2\r\n${bulk("INFO")}${bulk("replication")}${QUIT}`)}`,
    `  tcp-check expect string role:${role}`,
  ];
}

/**
 * A Sentinel's check in the quorum backend of one member: passes only while this Sentinel
 * answers `SENTINEL GET-MASTER-ADDR-BY-NAME <masterName>` with exactly that member's announced
 * host and port (what the Sentinels report: the member's DNS name with `announce-hostnames`,
 * its IP otherwise). The Sentinels share the data members' password (sentinel-conf.ts).
 *
 * Sentinel knows no QUIT (`-ERR unknown command`), so the connection stays open and a plain
 * `expect binary` that does not match waits for more data until the check timeout: measured, a
 * Sentinel that stopped naming the member still counted for a whole second. So two steps: the
 * first waits for a COMPLETE reply (a two-element array, a null array or an error; `\r\n` are
 * documented cfg escapes, `[*]`/`[$]` avoid any other), the second compares it with the exact
 * expected bytes and is conclusive at once (`min-recv 0`: HAProxy 2.6 manual, "tcp-check expect";
 * an `rbinary` regex matches the hex dump of the buffer, uppercase, and has no "wait until as
 * many bytes as the pattern" rule that `binary` has, which kept a SHORTER reply waiting).
 */
export function sentinelNamesCheck(
  masterName: string,
  member: { host: string; port: number },
  password: string | undefined,
): string[] {
  return [
    `  option tcp-check`,
    `  tcp-check connect`,
    ...login(password),
    `  tcp-check send-binary ${commandHex("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName)}`,
    `  tcp-check expect rstring ${COMPLETE_REPLY}`,
    `  tcp-check expect min-recv 0 rbinary ^${masterAddrReplyHex(member.host, member.port).toUpperCase()}$`,
  ];
}

/**
 * The extra step of a write server's check: asks HAProxy's own status frontend whether the
 * Sentinel majority still names this member (`GET /quorum/<member>`, 200 or 503), so a member
 * that loses the majority while still saying `role:master` fails its check and
 * `on-marked-down shutdown-sessions` cuts its sessions. `addr`/`port` of `tcp-check connect`
 * (HAProxy ≥ 2.2) point this step at the status frontend instead of the member.
 */
export function quorumStatusStep(status: { addr: string; port: number }, member: string): string[] {
  return [
    `  tcp-check connect addr ${status.addr} port ${status.port}`,
    `  tcp-check send-binary ${hex(`GET ${quorumPath(member)} HTTP/1.0\r\n\r\n`)}`,
    `  tcp-check expect rstring ^HTTP/1[.][01]\\ 200[^0-9]`,
  ];
}

/**
 * The status frontend's path answering 200 only while some member qualifies for writes AND every
 * listed Sentinel names it (not just a majority): what a rolling restart waits for before it
 * restarts the next Sentinel. A Sentinel that came back on a new pod IP counts again only once
 * HAProxy resolves its DNS name to that IP (the cluster DNS caches the old record up to its TTL:
 * 30 s with kubeadm's and the local cluster's Corefile); restarting the next Sentinel before that
 * left one of three counting, no majority, and the write endpoint closed for 23.7 s on real pods.
 */
export const SENTINELS_PATH = "/sentinels";
/** The status frontend's Prometheus endpoint (HAProxy's built-in `prometheus-exporter` service). */
export const METRICS_PATH = "/metrics";

/** The status frontend's path answering whether the Sentinel majority names `member`. */
export function quorumPath(member: string): string {
  return `/quorum/${member}`;
}
