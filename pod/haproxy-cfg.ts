/**
 * haproxy.cfg for the write endpoint that follows the Sentinels' primary (and a read endpoint of
 * replicas only), for clients that do not speak Sentinel. Pure; the Kubernetes side and the local
 * topology render the same text (haproxy-manifests.ts, harness/local/sentinel-topology.ts).
 *
 * The write rule: a new connection goes to member m only while BOTH
 * - a majority of the Sentinels (⌊S/2⌋+1 of the S listed) answer `SENTINEL
 *   GET-MASTER-ADDR-BY-NAME` with m's announced host and port (backend `quorum-<m>`: one server
 *   per Sentinel, each checked on its own, `nbsrv(quorum-<m>)` = how many name m), and no other
 *   member has such a majority (two majorities can only overlap while checks lag behind a
 *   failover: then nobody qualifies for that moment), and
 * - m itself says `role:master` (backend `write-<m>`, its only server m).
 * No member qualifies → no backend: HAProxy closes the connection. A demoted-late old primary
 * (frozen past `down-after` and resumed, or cut off from the Sentinels but not from HAProxy) still
 * says `role:master` for seconds until a Sentinel re-points it; the role check alone split new
 * connections between it and the new primary for that whole window (apps/perf/old-primary-perf.ts:
 * 47-49 of 94-98 per run on the old one); with the quorum rule 1-2 per run, all within 0.11 s of
 * a Sentinel majority naming the new primary (HAProxy's next check of the Sentinels), none after.
 * Sessions: m's write check also asks HAProxy's own status frontend whether the majority still
 * names m (`GET /quorum/<m>`), so a member that loses it fails its check and `on-marked-down
 * shutdown-sessions` cuts its open sessions (after `fall` checks), as it does on a role change.
 * Limits: the majority is of the Sentinels HAProxy can reach and ask; without a Sentinel
 * majority the write endpoint takes no connection at all, even with a healthy primary (the
 * Sentinel-aware path fails the same way); the Sentinels' view lags a real partition by
 * `down-after` + the election, and during that lag the old primary keeps its sessions and gets new
 * ones (min-replicas-to-write fencing is what bounds the writes it acknowledges then); a
 * failover's write stop through the endpoint grows by 0.4-0.9 s (apps/perf/failover-perf.ts):
 * the Sentinels name a promoted replica about 0.8 s after it says role:master, then HAProxy needs
 * one check of the Sentinels and one of the member.
 *
 * Following a failover: a server that is DOWN is checked every `downIntervalMs` (100 ms:
 * `downinter`, https://docs.haproxy.org/2.6/configuration.html#5.2-downinter), a Sentinel's server
 * that is UP every `sentinelIntervalMs` (100 ms), the members while UP every `checkIntervalMs`
 * (1 s, with `fall 2`: the stall tolerance below is unchanged). So the promoted member qualifies
 * within about 0.1 s of its quorum backend (0.1 s after the Sentinel majority names it) and the
 * old primary stops qualifying within 0.1 s; with one 1 s interval for all of it the endpoint
 * followed the Sentinels 1.1-1.6 s late (a quorum check, then a member check). The first write
 * through the endpoint after a Sentinel majority named the new primary (apps/perf/failover-perf.ts,
 * 5 SIGKILLs each, 2026-11-30): median 130 ms (54-163) with the UP Sentinels checked every 250 ms,
 * 64 ms (24-111) every 100 ms. Price: about 10 checks a second per Sentinel server (3 per member's
 * quorum backend) and per DOWN member check (2 replicas).
 *
 * Settled: `GET /sentinels` (haproxy-checks.ts SENTINELS_PATH) answers 200 while a qualifying member
 * is named by EVERY Sentinel, 503 otherwise: the rolling restart's gate between steps.
 *
 * Metrics: the status frontend's `/metrics` is HAProxy's built-in Prometheus exporter (`USE_PROMEX`:
 * Debian's 2.6 has it; the official image has built it in since docker-library/haproxy#95, 2019; that
 * image is not run from here).
 * `haproxy_backend_active_servers{proxy="write-<m>"}` is 1 while m passes its write check
 * (role:master, named by a Sentinel majority); the alert ValkeyWriteEndpointWithoutServer reads it.
 *
 * Readiness: the status frontend's `monitor-uri /ready` answers 200 while some member qualifies
 * for writes, 503 otherwise (HAProxy 2.6 manual, "monitor fail":
 * https://docs.haproxy.org/2.6/configuration.html#4.2-monitor%20fail).
 *
 * `fall 2 rise 1` for the members: one failed check is not enough to mark a member down (and cut
 * every session of the write endpoint). Measured (apps/perf/haproxy-check-perf.ts: checks
 * every 1 s, check timeout 1 s, the primary frozen 1.5 s, nothing failing over): with `fall 1` the
 * sessions were cut in 3 of 7 steady-state runs and the write gap grew from 1.5 s to 2.2-2.6 s; with
 * `fall 2`, 0 of 7, gap 1.5 s. The price: a member that really stopped being primary stays in the
 * backend one check longer (its writes fail with READONLY, clients redial). The Sentinels' servers
 * are `fall 1 rise 1`: a Sentinel that stops naming m stops counting at its first failed check,
 * and the majority tolerates one slow Sentinel. Not covered: the first check after HAProxy starts
 * marks a server down whatever `fall` says (servers start "up, going down"; `init-state fully-up`
 * is HAProxy ≥ 3.1, the local 2.6 does not know it); until the first checks, every quorum
 * backend is full, so with two or more members nobody qualifies (exclusive rule) for that moment.
 *
 * The file holds the password (AUTH in the checks, haproxy-checks.ts): write it mode 0600
 * (locally) or keep it in a Secret (Kubernetes); never argv.
 */
import type { NodeEndpoint } from "../vocabulary/endpoint.js";
import {
  METRICS_PATH,
  quorumPath,
  quorumStatusStep,
  roleCheck,
  SENTINELS_PATH,
  sentinelNamesCheck,
} from "./haproxy-checks.js";

/** The members' health check interval the pods run (the local drills run the same). */
export const DEFAULT_CHECK_INTERVAL_MS = 1000;

/**
 * Check timeouts. A slow answer is not a wrong one. On two cores at load ~50 (the pods CI, 4
 * stacks at once), with 1 s for every check, the write endpoint closed its connections in steady
 * state (a benchmark Job's runs failed: "Server closed the connection"; its GET p99 0.7 s, max
 * 1.4 s), and, most likely the same way, for 45 s while a Sentinel restarted (one Sentinel away,
 * one slow check of another loses the majority). A wrong answer still fails a check at once (haproxy-checks.ts: every
 * check
 * is conclusive on the reply); only a server that does not answer at all is judged later: a frozen
 * primary's sessions are cut after `fall` x (interval + 2 s) instead of x (interval + 1 s).
 */
export const DEFAULT_CHECK_TIMEOUT_MS = 2000;
export const DEFAULT_SENTINEL_CHECK_TIMEOUT_MS = 3000;

export { authCommandHex, bulkHex } from "./haproxy-checks.js";

export interface HaproxyServer extends NodeEndpoint {
  /** HAProxy server name: [A-Za-z0-9._-]+. */
  name: string;
}

export interface HaproxyCfgOptions {
  /** The data members, `host` as the Sentinels report it (announced name or IP). */
  servers: readonly HaproxyServer[];
  /** Every Sentinel of the set; the write rule needs a majority of them to name the member. */
  sentinels: readonly HaproxyServer[];
  /** The Sentinels' master name. */
  masterName: string;
  /** Where the write endpoint listens (`bind host:port`, host may be `*`). */
  write: NodeEndpoint;
  /** Where the read endpoint (replicas only) listens; omitted = no read endpoint. */
  read?: NodeEndpoint;
  /** The HTTP status frontend (`/ready`; the write checks' `/quorum/<m>`): an IP or `*`. */
  status: NodeEndpoint;
  password?: string;
  /** Health check interval. @default DEFAULT_CHECK_INTERVAL_MS (1000) */
  checkIntervalMs?: number;
  /**
   * Connect timeout, and how long a member's check may take once connected (its exchanges: AUTH,
   * PING, INFO, then the status step). @default DEFAULT_CHECK_TIMEOUT_MS (2000)
   */
  checkTimeoutMs?: number;
  /**
   * How long a Sentinel's check in a quorum backend may take once connected (`timeout check` of
   * those backends). A Sentinel that stops naming the member answers at once and fails its check
   * at once whatever this says; the timeout only decides how long a Sentinel that does not answer
   * at all keeps counting, and a majority tolerates one such Sentinel. @default DEFAULT_SENTINEL_CHECK_TIMEOUT_MS
   * (3000)
   */
  sentinelCheckTimeoutMs?: number;
  /**
   * Check interval of a server that is DOWN in the write backends (a replica: not role:master or
   * not named) and in the quorum backends (a Sentinel that does not name that member): how soon
   * the endpoint sees a promoted member and the Sentinels naming it (`downinter`). @default 100
   */
  downIntervalMs?: number;
  /**
   * Check interval of the Sentinels' servers in the quorum backends while UP (they name the
   * member): how soon a Sentinel that stopped naming the old primary stops counting for it, which
   * the exclusive rule waits for. @default 100
   */
  sentinelIntervalMs?: number;
  /** Consecutive failed checks before a member is marked down (and its sessions cut). @default 2 */
  fall?: number;
  /** Consecutive passed checks before a member is marked up. @default 1 */
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
const NAME = /^[A-Za-z0-9._-]+$/;

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 100)
    throw new Error(`haproxy.cfg: ${name} must be a whole number from 1 to 100 (got ${value})`);
  return value;
}

function ms(name: string, value: number): string {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`haproxy.cfg: ${name} must be a whole number of milliseconds ≥ 1 (got ${value})`);
  return `${value}ms`;
}

function names(what: string, list: readonly HaproxyServer[]): void {
  if (list.length === 0)
    throw new Error(`haproxy.cfg: ${what} must name at least one ${what === "servers" ? "Valkey member" : "Sentinel"}`);
  for (const s of list)
    if (!NAME.test(s.name)) throw new Error(`haproxy.cfg: ${what} name '${s.name}' must match [A-Za-z0-9._-]+`);
  if (new Set(list.map((s) => s.name)).size !== list.length)
    throw new Error(`haproxy.cfg: ${what} names must be unique`);
}

/** Sentinels that must name a member: a strict majority, so two members never both have it. */
export function sentinelMajority(sentinels: number): number {
  return Math.floor(sentinels / 2) + 1;
}

const bind = (e: NodeEndpoint): string => (e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`);

/** The frontend ACLs (per proxy): `named-<m>` = a Sentinel majority names m, `master-<m>` = m says role:master. */
function acls(
  servers: readonly HaproxyServer[],
  majority: number,
): { lines: string[]; qualifies: (m: string) => string } {
  const lines = servers.flatMap((s) => [
    `  acl named-${s.name} nbsrv(quorum-${s.name}) ge ${majority}`,
    `  acl master-${s.name} nbsrv(write-${s.name}) ge 1`,
  ]);
  const qualifies = (m: string): string =>
    [`master-${m}`, `named-${m}`, ...servers.filter((x) => x.name !== m).map((x) => `!named-${x.name}`)].join(" ");
  return { lines, qualifies };
}

/** The options' values, checked, as the cfg writes them. */
interface CfgValues {
  /** Where the write checks ask the status frontend (`*` binds all, the checks dial 127.0.0.1). */
  statusAddr: string;
  inter: string;
  checkTimeout: string;
  sentinelCheckTimeout: string;
  fall: number;
  rise: number;
  idle: string;
  majority: number;
  /** The per-server DNS re-resolution suffix ("" without `dnsResolve`). */
  dns: string;
  downInter: string;
  sentinelInter: string;
}

function checkedValues(o: HaproxyCfgOptions): CfgValues {
  names("servers", o.servers);
  names("sentinels", o.sentinels);
  if (!NAME.test(o.masterName)) throw new Error(`haproxy.cfg: masterName '${o.masterName}' must match [A-Za-z0-9._-]+`);
  const statusAddr = o.status.host === "*" ? "127.0.0.1" : o.status.host;
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(statusAddr))
    throw new Error(
      `haproxy.cfg: status host '${o.status.host}' must be an IPv4 address or * (the write checks connect to it)`,
    );
  const inter = ms("checkIntervalMs", o.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
  const checkTimeout = ms("checkTimeoutMs", o.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS);
  const sentinelCheckTimeout = ms(
    "sentinelCheckTimeoutMs",
    o.sentinelCheckTimeoutMs ?? DEFAULT_SENTINEL_CHECK_TIMEOUT_MS,
  );
  const fall = count("fall", o.fall ?? 2);
  const rise = count("rise", o.rise ?? 1);
  const idle = ms("idleTimeoutMs", o.idleTimeoutMs ?? 3_600_000);
  if (o.source !== undefined && !/^[0-9A-Fa-f:.]+$/.test(o.source))
    throw new Error(`haproxy.cfg: source must be an IP address (got '${o.source}')`);
  return {
    statusAddr,
    inter,
    checkTimeout,
    sentinelCheckTimeout,
    fall,
    rise,
    idle,
    majority: sentinelMajority(o.sentinels.length),
    dns: o.dnsResolve ? ` resolvers ${RESOLVERS} resolve-prefer ipv4 init-addr last,libc,none` : "",
    downInter: ms("downIntervalMs", o.downIntervalMs ?? 100),
    sentinelInter: ms("sentinelIntervalMs", o.sentinelIntervalMs ?? 100),
  };
}

/** A data member's server line, checked every `inter` while up. */
function memberServer(s: HaproxyServer, v: CfgValues, extra = ""): string {
  return `  server ${s.name} ${bind(s)} check inter ${v.inter}${extra} fall ${v.fall} rise ${v.rise} on-marked-down shutdown-sessions${v.dns}`;
}

/** The heading comment, global, defaults and (with `dnsResolve`) the cluster DNS resolvers. */
function headLines(o: HaproxyCfgOptions, v: CfgValues): string[] {
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
  return [
    `# haproxy.cfg rendered by valkey-on-eks: write endpoint -> the member a Sentinel majority names AND that says role:master;`,
    `# read endpoint -> role:slave only; status frontend: /ready (some member qualifies for writes), /quorum/<member>, /sentinels (every Sentinel names it), /metrics (Prometheus).`,
    `global`,
    `  maxconn ${o.maxConnections ?? 4096}`,
    `defaults`,
    `  mode tcp`,
    `  timeout connect ${v.checkTimeout}`,
    `  timeout check ${v.checkTimeout}`,
    `  timeout client ${v.idle}`,
    `  timeout server ${v.idle}`,
    ...(o.source === undefined ? [] : [`  source ${o.source}`]),
    ...resolvers,
  ];
}

/** The write frontend and the status frontend (`/ready`, `/quorum/<m>`, `/sentinels`, `/metrics`). */
function frontendLines(o: HaproxyCfgOptions, v: CfgValues): string[] {
  const { lines: aclLines, qualifies } = acls(o.servers, v.majority);
  const anyQualifies = o.servers.map((s) => qualifies(s.name)).join(" || ");
  return [
    `frontend valkey-write`,
    `  bind ${bind(o.write)}`,
    ...aclLines,
    ...o.servers.map((s) => `  use_backend write-${s.name} if ${qualifies(s.name)}`),
    `frontend status`,
    `  mode http`,
    `  bind ${bind(o.status)}`,
    `  timeout client 5s`,
    `  timeout http-request 5s`,
    ...aclLines,
    `  monitor-uri /ready`,
    `  monitor fail unless ${anyQualifies}`,
    ...o.servers.flatMap((s) => [
      `  http-request return status 200 if { path ${quorumPath(s.name)} } named-${s.name}`,
      `  http-request return status 503 if { path ${quorumPath(s.name)} }`,
    ]),
    ...o.servers.map(
      (s) =>
        `  http-request return status 200 if { path ${SENTINELS_PATH} } ${qualifies(s.name)} { nbsrv(quorum-${s.name}) ge ${o.sentinels.length} }`,
    ),
    `  http-request return status 503 if { path ${SENTINELS_PATH} }`,
    `  http-request use-service prometheus-exporter if { path ${METRICS_PATH} }`,
    `  http-request return status 404`,
  ];
}

/**
 * Per member: `write-<m>` (role:master, then the status frontend's `/quorum/<m>`) and `quorum-<m>` (one server per
 * Sentinel).
 */
function memberBackendLines(o: HaproxyCfgOptions, v: CfgValues): string[] {
  return o.servers.flatMap((s) => [
    `backend write-${s.name}`,
    ...roleCheck("master", o.password),
    ...quorumStatusStep({ addr: v.statusAddr, port: o.status.port }, s.name),
    memberServer(s, v, ` downinter ${v.downInter}`),
    `backend quorum-${s.name}`,
    `  timeout check ${v.sentinelCheckTimeout}`,
    ...sentinelNamesCheck(o.masterName, s, o.password),
    ...o.sentinels.map(
      (x) =>
        `  server ${x.name} ${bind(x)} check inter ${v.sentinelInter} downinter ${v.downInter} fall 1 rise 1${v.dns}`,
    ),
  ]);
}

/** The read endpoint: every member, only those saying role:slave pass. */
function readLines(o: HaproxyCfgOptions, read: NodeEndpoint, v: CfgValues): string[] {
  return [
    `frontend valkey-read`,
    `  bind ${bind(read)}`,
    `  default_backend valkey-replicas`,
    `backend valkey-replicas`,
    ...roleCheck("slave", o.password),
    ...o.servers.map((s) => memberServer(s, v)),
  ];
}

export function renderHaproxyCfg(o: HaproxyCfgOptions): string {
  const v = checkedValues(o);
  const lines = [
    ...headLines(o, v),
    ...frontendLines(o, v),
    ...memberBackendLines(o, v),
    ...(o.read ? readLines(o, o.read, v) : []),
  ];
  return lines.join("\n") + "\n";
}
