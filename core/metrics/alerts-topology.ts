/**
 * Alerts on the topology itself: who is primary, replicas' links and lag, the Sentinels, the write
 * endpoint, the cluster's state and slots. Metric names are redis_exporter's (1.45, checked
 * against real servers by tests/harness/exporter-metrics.test.ts) and HAProxy's built-in
 * Prometheus endpoint's.
 */
import { RELEASE, series, steady, target, type AlertDefinition, type AlertInputs } from "./alert-definition.js";
import { RELEASE_GROUP } from "./targets.js";

/** Longer than a failover at these clocks should take: down-after + 5 s (measured: 6.3–7.9 s at 5 s). */
const pastFailover = (i: AlertInputs): number => i.downAfterSeconds + 5;
/** Longer than a cluster failover should take: node timeout + 5 s. */
const pastClusterFailover = (i: AlertInputs): number => i.nodeTimeoutSeconds + 5;

const members = ["valkey-0", "valkey-1", "valkey-2"];
const roles = (master: readonly string[]) =>
  members.flatMap((pod) => [
    series("redis_up", target("valkey", pod), steady(1)),
    series("redis_instance_info", target("valkey", pod), steady(1), {
      role: master.includes(pod) ? "master" : "slave",
    }),
  ]);

export const NO_PRIMARY: AlertDefinition = {
  alert: "ValkeyNoPrimary",
  modes: ["replication"],
  severity: "critical",
  expr: () =>
    `count by (${RELEASE_GROUP}) (redis_up{component="valkey"}) unless on (${RELEASE_GROUP}) ` +
    `count by (${RELEASE_GROUP}) (redis_instance_info{component="valkey", role="master"})`,
  forSeconds: pastFailover,
  summary: "No member of the release reports role master: writes have nowhere to go for longer than a failover takes.",
  action:
    "Check the Sentinels (SENTINEL MASTER <name>: flags, failover state) and each member's ROLE; a failover the Sentinels cannot start (no quorum, NOGOODSLAVE) needs a replica with data and a Sentinel majority.",
  cases: () => [
    { what: "every member a replica", series: roles([]), fires: [{ ...RELEASE }] },
    { what: "one primary", series: roles(["valkey-0"]), fires: [] },
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
export const ENDPOINT_EMPTY: AlertDefinition = {
  alert: "ValkeyWriteEndpointWithoutServer",
  modes: ["replication"],
  severity: "critical",
  expr: () =>
    `sum by (namespace, release, pod) (haproxy_backend_active_servers{component="haproxy", proxy=~"write-.+"}) == 0`,
  forSeconds: pastFailover,
  summary:
    "The write endpoint (HAProxy) has no member that answers role master: clients without Sentinel support cannot write.",
  action:
    "Compare with ValkeyNoPrimary: with a primary named, check HAProxy's member checks (AUTH, NetworkPolicy from HAProxy to 6379) on its stats page.",
  cases: () => [
    {
      what: "no write backend up, quorum backends full",
      series: [backend("write-valkey-0", 0), backend("write-valkey-1", 0), backend("quorum-valkey-0", 3)],
      fires: [{ ...RELEASE, pod: "valkey-haproxy-0" }],
    },
    { what: "one write backend up", series: [backend("write-valkey-0", 0), backend("write-valkey-1", 1)], fires: [] },
  ],
};

export const CLUSTER_STATE: AlertDefinition = {
  alert: "ValkeyClusterStateNotOk",
  modes: ["cluster"],
  severity: "critical",
  expr: () => `redis_cluster_state{component="valkey"} == 0`,
  forSeconds: pastClusterFailover,
  summary: "A member reports cluster_state fail for longer than a cluster failover takes: it refuses every command.",
  action:
    "CLUSTER INFO and CLUSTER NODES on the member: slots without a live primary (a shard lost with all its replicas), or a member cut off from the majority.",
  cases: () => [
    {
      what: "state fail",
      series: [series("redis_cluster_state", target("valkey", "valkey-3"), steady(0))],
      fires: [target("valkey", "valkey-3")],
    },
    { what: "state ok", series: [series("redis_cluster_state", target("valkey", "valkey-3"), steady(1))], fires: [] },
  ],
};

export const SLOTS_NOT_OK: AlertDefinition = {
  alert: "ValkeyClusterSlotsNotOk",
  modes: ["cluster"],
  severity: "critical",
  expr: () => `redis_cluster_slots_ok{component="valkey"} < 16384`,
  forSeconds: pastClusterFailover,
  summary: "A member sees fewer than all 16384 slots served by a healthy primary: part of the keyspace is unavailable.",
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
  ],
};
