/**
 * haproxy.cfg for the write endpoint that follows the primary (and a read endpoint of replicas
 * only), for clients that do not speak Sentinel. Pure; the Kubernetes side renders the same
 * text. Classic pattern: every data member is a server of both backends; a TCP health check
 * logs in, PINGs and reads `INFO replication`, and a member is up in the write backend only
 * while it says `role:master`, in the read backend only while it says `role:slave`.
 * `on-marked-down shutdown-sessions` cuts the connections of a member that stops being the
 * primary, so clients reconnect to the new one instead of writing into a read-only replica.
 *
 * `fall 2 rise 1`: one failed check is not enough to mark a member down (and cut every session
 * of the write endpoint). Measured (benchmarks/perf/haproxy-check-perf.ts: checks every 1 s,
 * check timeout 1 s, the primary frozen 1.5 s, i.e. a fork, a starved node or a benchmark
 * saturating it, nothing failing over): with `fall 1` the sessions were cut in 3 of 7
 * steady-state runs and the write gap grew from 1.5 s to 2.2-2.6 s (no primary in the backend
 * until the next check); with `fall 2`, 0 of 7, gap 1.5 s. The price: a member that really
 * stopped being primary stays in the backend one check longer (its writes fail with READONLY,
 * clients redial); the preStop switchover's longest write gap stayed within the noise (fall 1:
 * 1.6-2.9 s, fall 2: 1.6-2.7 s). A new primary joins after one passing check. INFO and QUIT go in
 * one send, so a member with the other role fails its check at once (the server closes the
 * connection) instead of after the check timeout, which with `fall 2` would keep it in the
 * backend for two timeouts. Not covered: the first check after HAProxy starts marks a server
 * down whatever `fall` says (servers start "up, going down"; `init-state fully-up` changes that
 * from HAProxy 3.1, the local 2.6 does not know it).
 *
 * The AUTH command is sent as a RESP array in hex (`tcp-check send-binary`): any password
 * byte works and nothing needs escaping for the cfg syntax. The file therefore holds the
 * password: write it mode 0600 (locally) or keep it in a Secret (Kubernetes); never argv.
 */
import type { NodeEndpoint } from "../../benchmarks/topology/endpoint.js";

export interface HaproxyServer extends NodeEndpoint {
  /** HAProxy server name: [A-Za-z0-9._-]+. */
  name: string;
}

export interface HaproxyCfgOptions {
  servers: readonly HaproxyServer[];
  /** Where the write endpoint listens (`bind host:port`, host may be `*`). */
  write: NodeEndpoint;
  /** Where the read endpoint (replicas only) listens; omitted = no read endpoint. */
  read?: NodeEndpoint;
  password?: string;
  /** Health check interval. @default 1000 */
  checkIntervalMs?: number;
  /** Connect and check timeout. @default 1000 */
  checkTimeoutMs?: number;
  /** Consecutive failed checks before a server is marked down (and its sessions cut). @default 2 */
  fall?: number;
  /** Consecutive passed checks before a server is marked up. @default 1 */
  rise?: number;
  /** Idle client/server timeout (benchmarks keep connections open). @default 3600000 */
  idleTimeoutMs?: number;
  /** @default 4096 */
  maxConnections?: number;
  /**
   * Servers are DNS names that may not resolve yet and may change address (Kubernetes pods):
   * re-resolve them through the nameservers of /etc/resolv.conf, and start even when a name
   * does not resolve (`init-addr last,libc,none`: the server stays down until it does).
   */
  dnsResolve?: boolean;
  /**
   * Address its connections to the servers (proxied sessions and health checks) come from
   * (`source` in defaults: https://docs.haproxy.org/2.6/configuration.html#4.2-source). Omitted:
   * the kernel picks it (a pod's own IP). Local topologies set their proxy's 127.0.0.x.
   */
  source?: string;
}

const RESOLVERS = "cluster-dns";

function hex(text: string): string {
  return Buffer.from(text, "utf8").toString("hex");
}

/** `*2\r\n$4\r\nAUTH\r\n$<n>\r\n<password>\r\n` in hex. */
export function authCommandHex(password: string): string {
  const bytes = Buffer.byteLength(password, "utf8");
  return hex(`*2\r\n$4\r\nAUTH\r\n$${bytes}\r\n${password}\r\n`);
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 100) throw new Error(`haproxy.cfg: ${name} must be a whole number from 1 to 100 (got ${value})`);
  return value;
}

function ms(name: string, value: number): string {
  if (!Number.isInteger(value) || value < 1) throw new Error(`haproxy.cfg: ${name} must be a whole number of milliseconds ≥ 1 (got ${value})`);
  return `${value}ms`;
}

function healthCheck(role: "master" | "slave", password: string | undefined): string[] {
  const lines = [`  option tcp-check`, `  tcp-check connect`];
  if (password !== undefined) lines.push(`  tcp-check send-binary ${authCommandHex(password)}`, `  tcp-check expect string +OK`);
  lines.push(
    `  tcp-check send-binary ${hex("*1\r\n$4\r\nPING\r\n")}`,
    `  tcp-check expect string +PONG`,
    // INFO and QUIT in one send: the server answers both and closes the connection, so a member
    // with the other role fails the check at once instead of after the check timeout.
    `  tcp-check send-binary ${hex("*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n*1\r\n$4\r\nQUIT\r\n")}`,
    `  tcp-check expect string role:${role}`,
  );
  return lines;
}

export function renderHaproxyCfg(o: HaproxyCfgOptions): string {
  if (o.servers.length === 0) throw new Error("haproxy.cfg: servers must name at least one Valkey member");
  for (const s of o.servers) {
    if (!/^[A-Za-z0-9._-]+$/.test(s.name)) throw new Error(`haproxy.cfg: server name '${s.name}' must match [A-Za-z0-9._-]+`);
  }
  if (new Set(o.servers.map((s) => s.name)).size !== o.servers.length) throw new Error("haproxy.cfg: server names must be unique");
  const inter = ms("checkIntervalMs", o.checkIntervalMs ?? 1000);
  const checkTimeout = ms("checkTimeoutMs", o.checkTimeoutMs ?? 1000);
  const fall = count("fall", o.fall ?? 2);
  const rise = count("rise", o.rise ?? 1);
  const idle = ms("idleTimeoutMs", o.idleTimeoutMs ?? 3_600_000);
  if (o.source !== undefined && !/^[0-9A-Fa-f:.]+$/.test(o.source)) throw new Error(`haproxy.cfg: source must be an IP address (got '${o.source}')`);
  const dns = o.dnsResolve ? ` resolvers ${RESOLVERS} resolve-prefer ipv4 init-addr last,libc,none` : "";
  const bind = (e: NodeEndpoint): string => (e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`);
  const backend = (name: string, role: "master" | "slave"): string[] => [
    `backend ${name}`,
    ...healthCheck(role, o.password),
    ...o.servers.map((s) => `  server ${s.name} ${bind(s)} check inter ${inter} fall ${fall} rise ${rise} on-marked-down shutdown-sessions${dns}`),
  ];
  const resolvers = o.dnsResolve
    ? [
        `resolvers ${RESOLVERS}`,
        `  parse-resolv-conf`,
        `  resolve_retries 3`,
        `  timeout resolve 1s`,
        `  timeout retry 1s`,
        `  hold valid 5s`,
        `  hold nx 1s`,
        `  hold obsolete 5s`,
      ]
    : [];
  const lines = [
    `# haproxy.cfg rendered by valkey-on-eks: write endpoint -> role:master only, read endpoint -> role:slave only.`,
    `global`,
    `  maxconn ${o.maxConnections ?? 4096}`,
    `defaults`,
    `  mode tcp`,
    `  timeout connect ${checkTimeout}`,
    `  timeout check ${checkTimeout}`,
    `  timeout client ${idle}`,
    `  timeout server ${idle}`,
    ...(o.source === undefined ? [] : [`  source ${o.source}`]),
    ...resolvers,
    `frontend valkey-write`,
    `  bind ${bind(o.write)}`,
    `  default_backend valkey-primary`,
    ...backend("valkey-primary", "master"),
  ];
  if (o.read) lines.push(`frontend valkey-read`, `  bind ${bind(o.read)}`, `  default_backend valkey-replicas`, ...backend("valkey-replicas", "slave"));
  return lines.join("\n") + "\n";
}
