/**
 * Alerts on the topology itself: who is primary, replicas' links and lag, the Sentinels, the write
 * endpoint, the cluster's state and slots. Metric names are redis_exporter's (1.45, checked
 * against real servers by tests/harness/exporter-metrics.test.ts) and HAProxy's built-in
 * Prometheus endpoint's.
 */
import {
  RELEASE,
  series,
  steady,
  target,
  type AlertDefinition,
  type AlertInputs,
  type CaseSeries,
} from "./alert-definition.js";
import { RELEASE_GROUP } from "./targets.js";

/** Longer than a failover at these clocks should take: down-after + 5 s (measured: 6.3–7.9 s at 5 s). */
const pastFailover = (i: AlertInputs): number => i.downAfterSeconds + 5;
/** Longer than a cluster failover should take: node timeout + 5 s. */
const pastClusterFailover = (i: AlertInputs): number => i.nodeTimeoutSeconds + 5;
/** Started within the last 10 minutes (the server's uptime): a deploy's or a scale-out's members, or a restart's. */
const YOUNG_SECONDS = 600;
/**
 * Members being brought in: started within the last 10 minutes and not in a formed cluster within the hour (no
 * primary served a slot as they saw it): a release being deployed, or members a scale-out adds, before the bootstrap
 * joins them. Each reports cluster_state fail from its start until then, longer than the hold: on real pods the first
 * deploy fired both cluster alerts on every member for 8-18 s (2026-12-01). A cluster formed and then wiped still
 * alerts (its hour holds a size above 0), and so does a member still outside a cluster 10 minutes after its start.
 */
const JOINING =
  `(max_over_time(redis_cluster_size{component="valkey"}[1h]) == 0) and on (namespace, release, pod) ` +
  `(redis_uptime_in_seconds{component="valkey"} < ${YOUNG_SECONDS})`;
const unlessNeverFormed = (expr: string): string => `(${expr}) unless on (namespace, release, pod) (${JOINING})`;
/** A member's uptime as promtool reads it: `from` seconds at the case's start, 15 s more each sample. */
const uptime = (pod: string, from: number) => series("redis_uptime_in_seconds", target("valkey", pod), `${from}+15x30`);
/** The cases every cluster-state alert has for JOINING: before the bootstrap, a member left out, a cluster wiped. */
const formedCases = (metric: string, bad: number) => [
  {
    what: "never formed, started 1 min before (a release being deployed, before the bootstrap)",
    series: [
      series(metric, target("valkey", "valkey-3"), steady(bad)),
      series("redis_cluster_size", target("valkey", "valkey-3"), steady(0)),
      uptime("valkey-3", 60),
    ],
    fires: [],
  },
  {
    what: "never formed, started 20 min before (a member left out of its cluster)",
    series: [
      series(metric, target("valkey", "valkey-3"), steady(bad)),
      series("redis_cluster_size", target("valkey", "valkey-3"), steady(0)),
      uptime("valkey-3", 1200),
    ],
    fires: [target("valkey", "valkey-3")],
  },
  {
    what: "formed, then every slot lost (size 3 for 2.5 min, then 0)",
    series: [
      series(metric, target("valkey", "valkey-3"), steady(bad)),
      series("redis_cluster_size", target("valkey", "valkey-3"), "3x10 0x20"),
    ],
    fires: [target("valkey", "valkey-3")],
  },
];

const members = ["valkey-0", "valkey-1", "valkey-2"];
const roles = (master: readonly string[]) =>
  members.flatMap((pod) => [
    series("redis_up", target("valkey", pod), steady(1)),
    series("redis_instance_info", target("valkey", pod), steady(1), {
      role: master.includes(pod) ? "master" : "slave",
    }),
  ]);

/** A member reporting role master: `values` as promtool reads them. */
const masterSeen = (values: string) =>
  series("redis_instance_info", target("valkey", "valkey-0"), values, { role: "master" });
/**
 * A replication release being deployed: its oldest member started within the last 10 minutes and none has been
 * primary within the hour. Until the start scripts elect the first one (they wait for the Sentinels' agreement) there
 * is no primary, longer than the holds: on real pods a first deploy fired the write endpoint alert on both HAProxy
 * pods (+31 s, +37 s) and, once that was mended, ValkeyNoPrimary (+91 s) (2026-12-01). A release that had a primary
 * (every member restarted at once) still alerts, and so does one still without a primary 10 minutes after its start.
 */
const youngUnlessPrimarySeen = (offset: string) =>
  `(max by (${RELEASE_GROUP}) (redis_uptime_in_seconds{component="valkey"}) < ${YOUNG_SECONDS}) unless on (${RELEASE_GROUP}) ` +
  `max by (${RELEASE_GROUP}) (max_over_time(redis_instance_info{component="valkey", role="master"}[1h]${offset}))`;
const DEPLOYING = youngUnlessPrimarySeen("");
const unlessDeploying = (expr: string): string => `(${expr}) unless on (${RELEASE_GROUP}) (${DEPLOYING})`;
/** How long after a release's first primary HAProxy may still not route to it (it follows a Sentinel majority). */
const FIRST_PRIMARY_SETTLE = "3m";
/**
 * A write endpoint being deployed: this HAProxy pod's write backends never had a server up within the hour, and its
 * release is DEPLOYING or got its first primary within the last 3 minutes. HAProxy routes to a primary only once a
 * Sentinel majority names it: on real pods, with a primary seen counting as deployed, a first deploy still fired
 * this alert (+55.7 s, its first primary already elected) (2026-12-02). An endpoint that routed once and lost its
 * server alerts at any age: with "3 minutes after the first primary" alone, a young release whose Sentinels lost
 * their majority 2 minutes in fired nothing (tests/harness/alerts-real.test.ts, in the CI of 349cae7).
 */
const endpointDeploying = (i: AlertInputs): string =>
  `(count by (namespace, release, pod) (haproxy_backend_active_servers{component="haproxy", proxy=~"write-.+"}) ` +
  `unless on (namespace, release, pod) max_over_time((${WRITE_SERVERS_CHECKED_UP})[1h:${i.scrapeIntervalSeconds}s])) ` +
  `and on (${RELEASE_GROUP}) ((${youngUnlessPrimarySeen(` offset ${FIRST_PRIMARY_SETTLE}`)}) or on (${RELEASE_GROUP}) (${NO_MEMBER_YET}))`;
/**
 * A release whose HAProxy pods started within the last 10 minutes and none of whose members has been scraped within
 * the hour: HAProxy's Deployment is up before the members' StatefulSet, so without this the young-release test above
 * had no uptime to read and the alert fired on both HAProxy pods of a first deploy on real pods (pending 2 s after
 * their first scrape, 34 s before any member's; 2026-12-02).
 */
const NO_MEMBER_YET =
  `(max by (${RELEASE_GROUP}) (haproxy_process_uptime_seconds{component="haproxy"}) < ${YOUNG_SECONDS}) ` +
  `unless on (${RELEASE_GROUP}) max by (${RELEASE_GROUP}) (max_over_time(redis_uptime_in_seconds{component="valkey"}[1h]))`;
/**
 * One HAProxy pod's write servers UP after a completed check. HAProxy starts every server UP before its first check
 * (no check status yet: every state of `haproxy_server_check_status` is 0) and marks it down at that check: a scrape in
 * that moment read an endpoint being deployed as one that had routed (`haproxy_backend_active_servers` 1), and the
 * alert fired on both HAProxy pods of a first deploy on real pods (+58.4 s, +60.4 s) (2026-12-02; 1 for 0.5 s after
 * the start at a 1 s check interval, members' ports closed).
 */
const WRITE_SERVERS_CHECKED_UP =
  `count by (namespace, release, pod) ((haproxy_server_status{component="haproxy", proxy=~"write-.+", state="UP"} == 1) ` +
  `and on (namespace, release, pod, proxy, server) ` +
  `(max by (namespace, release, pod, proxy, server) (haproxy_server_check_status{component="haproxy", proxy=~"write-.+"}) == 1))`;
/** The cases every no-primary alert has for DEPLOYING, over `without` (series with no member answering master). */
const deployingCases = (without: CaseSeries[], fires: Array<Record<string, string>>) => [
  {
    what: "no primary yet, members started 1 min before (a release being deployed)",
    series: [...without, uptime("valkey-0", 60)],
    fires: [],
  },
  {
    what: "no primary yet, members started 20 min before (a release that never got one)",
    series: [...without, uptime("valkey-0", 1200)],
    fires,
  },
  {
    what: "a primary for 2.5 min, then none, members started 1 min before (every member restarted at once)",
    series: [...without, uptime("valkey-0", 60), masterSeen("1x10 _x20")],
    fires,
  },
];
export const NO_PRIMARY: AlertDefinition = {
  alert: "ValkeyNoPrimary",
  modes: ["replication"],
  severity: "critical",
  expr: () =>
    unlessDeploying(
      `count by (${RELEASE_GROUP}) (redis_up{component="valkey"}) unless on (${RELEASE_GROUP}) ` +
        `count by (${RELEASE_GROUP}) (redis_instance_info{component="valkey", role="master"})`,
    ),
  forSeconds: pastFailover,
  summary: "No member of the release reports role master: writes have nowhere to go for longer than a failover takes.",
  action:
    "Check the Sentinels (SENTINEL MASTER <name>: flags, failover state) and each member's ROLE; a failover the Sentinels cannot start (no quorum, NOGOODSLAVE) needs a replica with data and a Sentinel majority.",
  cases: () => [
    { what: "every member a replica", series: roles([]), fires: [{ ...RELEASE }] },
    { what: "one primary", series: roles(["valkey-0"]), fires: [] },
    ...deployingCases(roles([]), [{ ...RELEASE }]),
  ],
};

export const TWO_PRIMARIES: AlertDefinition = {
  alert: "ValkeyMultiplePrimaries",
  modes: ["replication"],
  severity: "critical",
  expr: () => `count by (${RELEASE_GROUP}) (redis_instance_info{component="valkey", role="master"}) > 1`,
  forSeconds: () => 15,
  summary: "More than one member reports role master: writes split between them, and the demoted one's are lost.",
  action:
    "Find which one the Sentinels name (SENTINEL GET-MASTER-ADDR-BY-NAME); the other must be re-pointed (REPLICAOF) or restarted so its start script rejoins it as a replica.",
  cases: () => [
    { what: "two primaries", series: roles(["valkey-0", "valkey-1"]), fires: [{ ...RELEASE }] },
    { what: "one primary", series: roles(["valkey-1"]), fires: [] },
  ],
};

const promotedSeries = (pod: string, slave: string, master: string) => [
  series("redis_instance_info", target("valkey", pod), slave, { role: "slave" }),
  series("redis_instance_info", target("valkey", pod), master, { role: "master" }),
];
export const PRIMARY_CHANGED: AlertDefinition = {
  alert: "ValkeyPrimaryChanged",
  modes: ["replication"],
  severity: "info",
  expr: () =>
    `max by (namespace, release, pod) (redis_instance_info{component="valkey", role="master"}) and on (namespace, release, pod) ` +
    `max by (namespace, release, pod) (max_over_time(redis_instance_info{component="valkey", role="slave"}[5m]))`,
  forSeconds: () => 0,
  summary:
    "A member that was a replica within the last 5 minutes is primary now: a failover or switchover happened (firing for 5 minutes after it).",
  action:
    "Nothing if it was planned (a roll, a drain). Otherwise find why the old primary went: its pod's events and last log lines, the Sentinels' +sdown/+odown; check that it came back as a replica.",
  cases: () => [
    {
      // 15 s samples: a replica for 4 m 45 s, primary from 5 m; evaluated at 7 m.
      what: "promoted 2 minutes ago",
      series: promotedSeries("valkey-1", "1x19 _x21", "_x19 1x21"),
      at: "7m",
      fires: [{ ...RELEASE, pod: "valkey-1" }],
    },
    {
      what: "primary all along",
      series: [series("redis_instance_info", target("valkey", "valkey-0"), steady(1), { role: "master" })],
      fires: [],
    },
    {
      what: "promoted 6 minutes ago",
      series: promotedSeries("valkey-1", "1x3 _x37", "_x3 1x37"),
      at: "7m",
      fires: [],
    },
  ],
};

export const LINK_DOWN: AlertDefinition = {
  alert: "ValkeyReplicaLinkDown",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `redis_master_link_up{component="valkey"} == 0`,
  forSeconds: () => 60,
  summary: "A replica's link to its primary is down: it serves stale reads and cannot be promoted with current data.",
  action:
    "Read the replica's log (connect errors, full syncs failing, repl-timeout) and the primary's (client-output-buffer-limit replica); check the NetworkPolicy and DNS of the primary's name.",
  cases: () => [
    {
      what: "link down",
      series: [series("redis_master_link_up", target("valkey", "valkey-1"), steady(0))],
      fires: [target("valkey", "valkey-1")],
    },
    { what: "link up", series: [series("redis_master_link_up", target("valkey", "valkey-1"), steady(1))], fires: [] },
  ],
};

const lagLabels = { slave_ip: "10.0.1.7", slave_port: "6379", slave_state: "online" };
export const LAG_OVER_BOUND: AlertDefinition = {
  alert: "ValkeyReplicaLagOverFencingBound",
  modes: ["replication"],
  severity: "warning",
  expr: (i) => `redis_connected_slave_lag_seconds{component="valkey"} > ${i.maxLagSeconds}`,
  forSeconds: () => 30,
  summary:
    "A replica has not acknowledged for longer than valkey.replication.minReplicasMaxLag: it no longer counts for min-replicas-to-write, so the primary refuses writes once too few replicas remain.",
  action:
    "Look for a slow or frozen replica (CPU, disk, network between zones) or a primary whose output buffer to it is full; the fencing bound itself is valkey.replication.minReplicasMaxLag.",
  cases: (i) => [
    {
      what: "lag one second over the bound",
      series: [
        series(
          "redis_connected_slave_lag_seconds",
          target("valkey", "valkey-0"),
          steady(i.maxLagSeconds + 1),
          lagLabels,
        ),
      ],
      fires: [{ ...target("valkey", "valkey-0"), ...lagLabels }],
    },
    {
      what: "lag at the bound",
      series: [
        series("redis_connected_slave_lag_seconds", target("valkey", "valkey-0"), steady(i.maxLagSeconds), lagLabels),
      ],
      fires: [],
    },
  ],
};

const ckquorum = (pod: string, v: number) =>
  series("redis_sentinel_master_ckquorum_status", target("sentinel", pod), steady(v), {
    master_name: "valkey-primary",
    message: v === 1 ? "OK 3 usable Sentinels" : "NOQUORUM 1 usable Sentinels",
  });
export const QUORUM_LOST: AlertDefinition = {
  alert: "ValkeySentinelQuorumLost",
  modes: ["replication"],
  severity: "critical",
  expr: () =>
    `max by (namespace, release, pod, master_name) (redis_sentinel_master_ckquorum_status{component="sentinel"}) == 0`,
  forSeconds: () => 30,
  summary:
    "A Sentinel reports that the quorum or the majority needed to authorize a failover cannot be reached: the next primary failure will not fail over.",
  action:
    "Bring the missing Sentinels back (pods, zones, NetworkPolicy on 26379); SENTINEL CKQUORUM <name> on each says how many it reaches.",
  cases: () => [
    {
      what: "NOQUORUM",
      series: [ckquorum("sentinel-0", 0)],
      fires: [{ ...RELEASE, pod: "sentinel-0", master_name: "valkey-primary" }],
    },
    { what: "quorum ok", series: [ckquorum("sentinel-0", 1)], fires: [] },
  ],
};

const named = (pod: string, address: string) =>
  series("redis_sentinel_master_status", target("sentinel", pod), steady(1), {
    master_name: "valkey-primary",
    master_address: address,
    master_status: "ok",
  });
export const SENTINELS_DISAGREE: AlertDefinition = {
  alert: "ValkeySentinelsDisagree",
  modes: ["replication"],
  severity: "critical",
  expr: () =>
    `count by (${RELEASE_GROUP}, master_name) (count by (${RELEASE_GROUP}, master_name, master_address) (redis_sentinel_master_status{component="sentinel"})) > 1`,
  forSeconds: () => 60,
  summary:
    "The Sentinels name different primaries for longer than a failover's propagation: clients that ask different Sentinels write to different members.",
  action:
    "SENTINEL MASTER <name> on each Sentinel; a Sentinel left on an old epoch is reset with SENTINEL RESET <name> once the others agree.",
  cases: () => [
    {
      what: "two addresses",
      series: [named("sentinel-0", "10.0.1.5:6379"), named("sentinel-1", "10.0.2.9:6379")],
      fires: [{ ...RELEASE, master_name: "valkey-primary" }],
    },
    {
      what: "one address",
      series: [named("sentinel-0", "10.0.1.5:6379"), named("sentinel-1", "10.0.1.5:6379")],
      fires: [],
    },
  ],
};

const backend = (proxy: string, active: number) =>
  series("haproxy_backend_active_servers", target("haproxy", "valkey-haproxy-0"), steady(active), { proxy });
/** The HAProxy pod's process uptime, from `from` seconds on. */
const haproxyUptime = (from: number) =>
  series("haproxy_process_uptime_seconds", target("haproxy", "valkey-haproxy-0"), `${from}+15x30`);
/**
 * Member `m`'s write backend on one HAProxy pod, as its `/metrics` shows it: `up` the backend's active servers and
 * the server's UP state, `checked` its last check's status (HAProxy sets one state to 1 once a check completed).
 */
const writeServer = (m: string, up: string, checked: string): CaseSeries[] => {
  const haproxy = target("haproxy", "valkey-haproxy-0");
  const proxy = `write-${m}`;
  return [
    series("haproxy_backend_active_servers", haproxy, up, { proxy }),
    series("haproxy_server_status", haproxy, up, { proxy, server: m, state: "UP" }),
    series("haproxy_server_check_status", haproxy, checked, { proxy, server: m, state: "L7OK" }),
  ];
};
export const ENDPOINT_EMPTY: AlertDefinition = {
  alert: "ValkeyWriteEndpointWithoutServer",
  modes: ["replication"],
  severity: "critical",
  expr: (i) =>
    `(sum by (namespace, release, pod) (haproxy_backend_active_servers{component="haproxy", proxy=~"write-.+"}) == 0) ` +
    `unless on (namespace, release, pod) (${endpointDeploying(i)})`,
  forSeconds: pastFailover,
  summary:
    "The write endpoint (HAProxy) has no member that answers role master: clients without Sentinel support cannot write (not while the release deploys: see ValkeyNoPrimary).",
  action:
    "Compare with ValkeyNoPrimary: with a primary named, check HAProxy's member checks (AUTH, NetworkPolicy from HAProxy to 6379) on its stats page.",
  cases: () => [
    {
      what: "no write backend up, quorum backends full",
      series: [backend("write-valkey-0", 0), backend("write-valkey-1", 0), backend("quorum-valkey-0", 3)],
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
    { what: "one write backend up", series: [backend("write-valkey-0", 0), backend("write-valkey-1", 1)], fires: [] },
    ...deployingCases(
      [backend("write-valkey-0", 0), backend("write-valkey-1", 0)],
      [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    ),
    {
      what: "members started 5 min ago, the first primary elected 1 min ago, not routed to yet (a release being deployed)",
      series: [
        backend("write-valkey-0", 0),
        backend("write-valkey-1", 0),
        uptime("valkey-0", 0),
        masterSeen("_x16 1x14"),
      ],
      at: "5m",
      fires: [],
    },
    {
      what: "members started 3 min ago, the first primary 2 min ago, routed to for 45 s, then not (a young release's endpoint lost)",
      series: [...writeServer("valkey-0", "0x4 1x2 0x30", "0x3 1x33"), uptime("valkey-0", 0), masterSeen("_x3 1x30")],
      at: "3m",
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
    {
      what: "HAProxy just started, its write servers up before their first check, then down; members started 1 min ago, no primary yet (a release being deployed)",
      series: [
        ...writeServer("valkey-0", "1 0x30", "0x31"),
        ...writeServer("valkey-1", "1 0x30", "0x31"),
        uptime("valkey-0", 60),
      ],
      fires: [],
    },
    {
      what: "HAProxy started 1 min ago, no member scraped yet (its Deployment is up before the members' StatefulSet)",
      series: [...writeServer("valkey-0", "0x30", "1x30"), haproxyUptime(60)],
      fires: [],
    },
    {
      what: "HAProxy started 20 min ago, no member scraped within the hour",
      series: [...writeServer("valkey-0", "0x30", "1x30"), haproxyUptime(1200)],
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
    {
      what: "HAProxy restarted 1 min ago beside members up for 20 min, no write server",
      series: [...writeServer("valkey-0", "0x30", "1x30"), haproxyUptime(60), uptime("valkey-0", 1200)],
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
    {
      what: "routed to after a completed check (members started 20 s ago), then not",
      series: [...writeServer("valkey-0", "0 1 0x30", "0 1 1x30"), uptime("valkey-0", 20)],
      at: "3m",
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
  ],
};

export const CLUSTER_STATE: AlertDefinition = {
  alert: "ValkeyClusterStateNotOk",
  modes: ["cluster"],
  severity: "critical",
  expr: () => unlessNeverFormed(`redis_cluster_state{component="valkey"} == 0`),
  forSeconds: pastClusterFailover,
  summary:
    "A member reports cluster_state fail for longer than a cluster failover takes: it refuses every command (members never yet in a formed cluster, as while a release deploys, are left out).",
  action:
    "CLUSTER INFO and CLUSTER NODES on the member: slots without a live primary (a shard lost with all its replicas), or a member cut off from the majority.",
  cases: () => [
    {
      what: "state fail",
      series: [series("redis_cluster_state", target("valkey", "valkey-3"), steady(0))],
      fires: [target("valkey", "valkey-3")],
    },
    { what: "state ok", series: [series("redis_cluster_state", target("valkey", "valkey-3"), steady(1))], fires: [] },
    ...formedCases("redis_cluster_state", 0),
  ],
};

export const SLOTS_NOT_OK: AlertDefinition = {
  alert: "ValkeyClusterSlotsNotOk",
  modes: ["cluster"],
  severity: "critical",
  expr: () => unlessNeverFormed(`redis_cluster_slots_ok{component="valkey"} < 16384`),
  forSeconds: pastClusterFailover,
  summary:
    "A member sees fewer than all 16384 slots served by a healthy primary: part of the keyspace is unavailable (members never yet in a formed cluster are left out).",
  action:
    "CLUSTER SHARDS: find the slots in pfail/fail or unassigned; a shard whose primary and replicas are all gone needs its pods back or a restore.",
  cases: () => [
    {
      what: "16000 slots ok",
      series: [series("redis_cluster_slots_ok", target("valkey", "valkey-0"), steady(16000))],
      fires: [target("valkey", "valkey-0")],
    },
    {
      what: "every slot ok",
      series: [series("redis_cluster_slots_ok", target("valkey", "valkey-0"), steady(16384))],
      fires: [],
    },
    ...formedCases("redis_cluster_slots_ok", 0),
  ],
};
