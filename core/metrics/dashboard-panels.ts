/**
 * Every panel of the stack's Grafana dashboards, listed once: its row, the modes it applies to, its
 * unit and its PromQL queries. dashboard.ts builds one dashboard per mode from this list with
 * Grafana's foundation SDK; the tests parse every query with Prometheus's own PromQL grammar
 * (lezer-promql) and check each metric it names against what the real exporters, HAProxy and
 * `vbench report --prometheus` emit (tests/core/dashboard.test.ts, tests/harness/exporter-metrics
 * .test.ts), and a real Prometheus answers every query with series (tests/harness/alerts-real.test.ts).
 *
 * Queries select by the target labels of targets.ts (`component` first, as the rules do, then the
 * dashboard's `$namespace` and `$release` variables). `$__rate_interval` and `$__range` are
 * Grafana's own; the tests substitute durations for them before parsing.
 */
import type { AlertMode } from "./alert-definition.js";
import type { Component } from "./targets.js";

/** The dashboard's rows, top to bottom. */
export const DASHBOARD_ROWS = [
  "Throughput and latency",
  "Memory and clients",
  "Replication and failover",
  "Cluster",
  "Sentinels and the write endpoint",
  "Persistence",
  "Measured by valkey-on-eks",
] as const;
export type DashboardRow = (typeof DASHBOARD_ROWS)[number];

export interface PanelQuery {
  expr: string;
  /** Grafana's legend template, e.g. `{{pod}}`. */
  legend: string;
}

export interface PanelDefinition {
  title: string;
  /** What it shows and how to read it, one or two sentences (the panel's description). */
  description: string;
  row: DashboardRow;
  modes: readonly AlertMode[];
  /** `timeseries` over time, `stat` one current figure, `state` a state timeline. */
  kind: "timeseries" | "stat" | "state";
  /** Grafana's unit id (`ops`, `s`, `bytes`, `percentunit`, `short`, `none`). */
  unit: string;
  queries: PanelQuery[];
}

const BOTH: readonly AlertMode[] = ["replication", "cluster"];
const REPLICATION: readonly AlertMode[] = ["replication"];
const CLUSTER: readonly AlertMode[] = ["cluster"];

/** `{component="c", namespace="$namespace", release="$release", …extra}`: one release's targets of a kind. */
export function sel(component: Component, extra = ""): string {
  return `{component="${component}", namespace="$namespace", release="$release"${extra === "" ? "" : `, ${extra}`}}`;
}

const V = sel("valkey");
const rate = (metric: string, selector = V): string => `rate(${metric}${selector}[$__rate_interval])`;

const THROUGHPUT: PanelDefinition[] = [
  {
    title: "Commands per second, by command",
    description: "What the members execute, summed over the release (INFO commandstats).",
    row: "Throughput and latency",
    modes: BOTH,
    kind: "timeseries",
    unit: "ops",
    queries: [{ expr: `sum by (cmd) (${rate("redis_commands_total")})`, legend: "{{cmd}}" }],
  },
  {
    title: "Commands per second, by member",
    description:
      "Each member's share: in cluster mode an uneven split is a hot shard; in replication the primary takes the writes.",
    row: "Throughput and latency",
    modes: BOTH,
    kind: "timeseries",
    unit: "ops",
    queries: [{ expr: `sum by (pod) (${rate("redis_commands_processed_total")})`, legend: "{{pod}}" }],
  },
  {
    title: "Mean server-side latency, by command",
    description:
      "Time the server spent executing each command over the calls (commandstats usec / calls): no network, no queueing; compare with the benchmark's client-side figures below.",
    row: "Throughput and latency",
    modes: BOTH,
    kind: "timeseries",
    unit: "s",
    queries: [
      {
        expr: `sum by (cmd) (${rate("redis_commands_duration_seconds_total")}) / sum by (cmd) (${rate("redis_commands_total")})`,
        legend: "{{cmd}}",
      },
    ],
  },
  {
    title: "p99 server-side latency, by command",
    description: "The members' own latency histogram (INFO latencystats, microseconds), the worst member per command.",
    row: "Throughput and latency",
    modes: BOTH,
    kind: "timeseries",
    unit: "µs",
    queries: [
      {
        expr: `max by (cmd) (redis_latency_percentiles_usec${sel("valkey", 'quantile="99"')})`,
        legend: "{{cmd}}",
      },
    ],
  },
  {
    title: "Failed and rejected calls per second",
    description:
      "Commands that returned an error (failed) or were refused before running (rejected: OOM, NOREPLICAS, READONLY, CLUSTERDOWN).",
    row: "Throughput and latency",
    modes: BOTH,
    kind: "timeseries",
    unit: "ops",
    queries: [
      { expr: `sum by (pod) (${rate("redis_commands_failed_calls_total")})`, legend: "failed {{pod}}" },
      { expr: `sum by (pod) (${rate("redis_commands_rejected_calls_total")})`, legend: "rejected {{pod}}" },
    ],
  },
];

const MEMORY: PanelDefinition[] = [
  {
    title: "Memory used over maxmemory",
    description:
      "Used memory as a fraction of maxmemory, per member; ValkeyMemoryNearMax fires over 0.9. A member without a maxmemory (0, no limit) has no ratio; the stack's members always have one (valkey.maxmemory).",
    row: "Memory and clients",
    modes: BOTH,
    kind: "timeseries",
    unit: "percentunit",
    queries: [
      {
        expr: `max by (pod) (redis_memory_used_bytes${V}) / max by (pod) (redis_memory_max_bytes${V} > 0)`,
        legend: "{{pod}}",
      },
    ],
  },
  {
    title: "Memory fragmentation ratio",
    description: "Resident memory over used memory; well above 1.5 the allocator holds memory the data no longer uses.",
    row: "Memory and clients",
    modes: BOTH,
    kind: "timeseries",
    unit: "none",
    queries: [{ expr: `max by (pod) (redis_mem_fragmentation_ratio${V})`, legend: "{{pod}}" }],
  },
  {
    title: "Connected clients, evictions and rejected connections",
    description: "Clients per member; keys evicted and connections refused (maxclients) per second.",
    row: "Memory and clients",
    modes: BOTH,
    kind: "timeseries",
    unit: "short",
    queries: [
      { expr: `sum by (pod) (redis_connected_clients${V})`, legend: "clients {{pod}}" },
      { expr: `sum by (pod) (${rate("redis_evicted_keys_total")})`, legend: "evicted/s {{pod}}" },
      { expr: `sum by (pod) (${rate("redis_rejected_connections_total")})`, legend: "rejected/s {{pod}}" },
    ],
  },
];

const REPLICATION_PANELS: PanelDefinition[] = [
  {
    title: "Role of each member",
    description: "1: primary, 0: replica. A member changing colour is a failover, a switchover or a roll.",
    row: "Replication and failover",
    modes: BOTH,
    kind: "state",
    unit: "none",
    queries: [
      {
        expr: `max by (pod) (redis_instance_info${sel("valkey", 'role="master"')}) or 0 * max by (pod) (redis_instance_info${sel("valkey", 'role="slave"')})`,
        legend: "{{pod}}",
      },
    ],
  },
  {
    title: "Failovers in the time range",
    description:
      "Members that were replicas in the range and are primaries now (ValkeyPrimaryChanged over the dashboard's range).",
    row: "Replication and failover",
    modes: BOTH,
    kind: "stat",
    unit: "short",
    queries: [
      {
        expr: `count(max by (pod) (redis_instance_info${sel("valkey", 'role="master"')}) and on (pod) max by (pod) (max_over_time(redis_instance_info${sel("valkey", 'role="slave"')}[$__range]))) or vector(0)`,
        legend: "failovers",
      },
    ],
  },
  {
    title: "Replication offset, by member",
    description:
      "The primary's offset and each replica's; the gap between a primary and its replica is the bytes not yet replicated.",
    row: "Replication and failover",
    modes: BOTH,
    kind: "timeseries",
    unit: "bytes",
    queries: [{ expr: `max by (pod) (redis_master_repl_offset${V})`, legend: "{{pod}}" }],
  },
  {
    title: "Replica lag (seconds since its last acknowledgement)",
    description: "As each primary sees its replicas; ValkeyReplicaLagOverFencingBound fires over minReplicasMaxLag.",
    row: "Replication and failover",
    modes: BOTH,
    kind: "timeseries",
    unit: "s",
    queries: [
      { expr: `max by (pod, slave_ip) (redis_connected_slave_lag_seconds${V})`, legend: "{{pod}} → {{slave_ip}}" },
    ],
  },
  {
    title: "Replica link up",
    description: "1 while a replica's link to its primary is up (ValkeyReplicaLinkDown fires on 0 for a minute).",
    row: "Replication and failover",
    modes: BOTH,
    kind: "state",
    unit: "none",
    queries: [{ expr: `max by (pod) (redis_master_link_up${V})`, legend: "{{pod}}" }],
  },
];

/** `role`'s members per zone, each pod counted once (its newest series). */
const perZone = (role: "master" | "slave"): string =>
  `count by (zone) (max by (pod, zone) (redis_instance_info${sel("valkey", `role="${role}", zone!=""`)}))`;

const ZONE_PANELS: PanelDefinition[] = [
  {
    title: "Primaries and replicas per zone",
    description:
      "Members of each role in each zone (the target's zone label, the node's topology.kubernetes.io/zone). A zone holding most primaries takes most of the keyspace down with it; a zone with primaries and no replicas elsewhere is what ValkeyNoReplicaInAnotherZone names.",
    row: "Replication and failover",
    modes: BOTH,
    kind: "timeseries",
    unit: "short",
    queries: [
      { expr: perZone("master"), legend: "primaries {{zone}}" },
      { expr: perZone("slave"), legend: "replicas {{zone}}" },
    ],
  },
];

const CLUSTER_PANELS: PanelDefinition[] = [
  {
    title: "Cluster state and slots served",
    description:
      "The worst member's view: cluster_state (1 ok) and slots served by a healthy primary (16384 when whole).",
    row: "Cluster",
    modes: CLUSTER,
    kind: "timeseries",
    unit: "short",
    queries: [
      { expr: `min(redis_cluster_state${V})`, legend: "cluster_state ok" },
      { expr: `min(redis_cluster_slots_ok${V})`, legend: "slots ok" },
      { expr: `max(redis_cluster_slots_pfail${V})`, legend: "slots pfail" },
      { expr: `max(redis_cluster_slots_fail${V})`, legend: "slots fail" },
    ],
  },
  {
    title: "Shards and nodes",
    description: "Shards serving slots (cluster_size) and nodes known, failing and suspected, as the members see them.",
    row: "Cluster",
    modes: CLUSTER,
    kind: "timeseries",
    unit: "short",
    queries: [
      { expr: `max(redis_cluster_size${V})`, legend: "shards" },
      { expr: `max(redis_cluster_known_nodes${V})`, legend: "known nodes" },
      { expr: `max(redis_cluster_nodes_pfail${V})`, legend: "nodes pfail" },
      { expr: `max(redis_cluster_nodes_fail${V})`, legend: "nodes fail" },
    ],
  },
  {
    title: "Cluster epoch",
    description: "The highest configuration epoch; each step up is a failover or another slot-ownership change.",
    row: "Cluster",
    modes: CLUSTER,
    kind: "timeseries",
    unit: "none",
    queries: [{ expr: `max(redis_cluster_current_epoch${V})`, legend: "epoch" }],
  },
];

const SENTINEL_PANELS: PanelDefinition[] = [
  {
    title: "Sentinels that see the primary, and its replicas",
    description:
      "Per Sentinel: the other Sentinels it hears and the replicas it sees healthy; CKQUORUM (1 ok) beside them.",
    row: "Sentinels and the write endpoint",
    modes: REPLICATION,
    kind: "timeseries",
    unit: "short",
    queries: [
      { expr: `max by (pod) (redis_sentinel_master_ok_sentinels${sel("sentinel")})`, legend: "sentinels {{pod}}" },
      { expr: `max by (pod) (redis_sentinel_master_ok_slaves${sel("sentinel")})`, legend: "replicas {{pod}}" },
      { expr: `max by (pod) (redis_sentinel_master_ckquorum_status${sel("sentinel")})`, legend: "quorum {{pod}}" },
    ],
  },
  {
    title: "Write endpoint: members in the write backend",
    description:
      "Servers HAProxy's write backend holds as up (the member answering role:master); 0 means writes through the endpoint fail.",
    row: "Sentinels and the write endpoint",
    modes: REPLICATION,
    kind: "timeseries",
    unit: "short",
    queries: [
      {
        expr: `sum by (pod) (haproxy_backend_active_servers${sel("haproxy", 'proxy=~"write-.+"')})`,
        legend: "{{pod}}",
      },
    ],
  },
];

const PERSISTENCE: PanelDefinition[] = [
  {
    title: "Last fork time",
    description:
      "How long the last fork (BGSAVE, AOF rewrite, full sync) blocked every client; ValkeyForkSlow fires over 0.5 s.",
    row: "Persistence",
    modes: BOTH,
    kind: "timeseries",
    unit: "s",
    queries: [{ expr: `max by (pod) (redis_latest_fork_seconds${V})`, legend: "{{pod}}" }],
  },
  {
    title: "AOF write, AOF rewrite and RDB save status",
    description: "The worst member's last status of each (1 ok, 0 failed).",
    row: "Persistence",
    modes: BOTH,
    kind: "timeseries",
    unit: "none",
    queries: [
      { expr: `min(redis_aof_last_write_status${V})`, legend: "AOF write" },
      { expr: `min(redis_aof_last_bgrewrite_status${V})`, legend: "AOF rewrite" },
      { expr: `min(redis_rdb_last_bgsave_status${V})`, legend: "RDB save" },
    ],
  },
];

/** The figures `vbench report --prometheus` exports (benchmarks/report/prometheus-export.ts), for the mode. */
function measured(mode: AlertMode): PanelDefinition[] {
  const m = `{mode="${mode}"}`;
  return [
    {
      title: "Benchmark throughput, by test",
      description: "Requests per second the stack's benchmark measured (median of its runs), per workload test.",
      row: "Measured by valkey-on-eks",
      modes: [mode],
      kind: "timeseries",
      unit: "ops",
      queries: [
        {
          expr: `max by (test, clients, pipeline) (vbench_throughput_ops_per_second${m})`,
          legend: "{{test}} c{{clients}} P{{pipeline}}",
        },
      ],
    },
    {
      title: "Benchmark p99 latency, by test",
      description: "The load generator's p99 (client-side: network and queueing included).",
      row: "Measured by valkey-on-eks",
      modes: [mode],
      kind: "timeseries",
      unit: "s",
      queries: [
        {
          expr: `max by (test, clients, pipeline) (vbench_latency_seconds{mode="${mode}", percentile="99"})`,
          legend: "{{test}} c{{clients}} P{{pipeline}}",
        },
      ],
    },
    {
      title: "Drills: write outage and acknowledged writes lost, by fault",
      description:
        "The worst run of each fault the drills injected (per shard in cluster mode), and writes acknowledged without WAIT that did not survive.",
      row: "Measured by valkey-on-eks",
      modes: [mode],
      kind: "timeseries",
      unit: "short",
      queries: [
        { expr: `max by (fault) (vbench_drill_write_outage_seconds${m})`, legend: "outage s {{fault}}" },
        { expr: `max by (fault) (vbench_drill_acked_writes_lost${m})`, legend: "lost {{fault}}" },
      ],
    },
  ];
}

/** Every panel of `mode`'s dashboard, in the order of its rows. */
export function panelsFor(mode: AlertMode): PanelDefinition[] {
  const all = [
    ...THROUGHPUT,
    ...MEMORY,
    ...REPLICATION_PANELS,
    ...ZONE_PANELS,
    ...CLUSTER_PANELS,
    ...SENTINEL_PANELS,
    ...PERSISTENCE,
    ...measured(mode),
  ];
  return all
    .filter((p) => p.modes.includes(mode))
    .sort((a, b) => DASHBOARD_ROWS.indexOf(a.row) - DASHBOARD_ROWS.indexOf(b.row));
}
