/**
 * Alerts on each server, the same in both modes: reachable, every member restarted at once, memory against maxmemory,
 * evictions and refused connections, persistence failing, a slow fork. Metric names are redis_exporter's.
 */
import { RELEASE, series, target, type AlertCase, type AlertDefinition } from "./alert-definition.js";
import { RELEASE_GROUP } from "./targets.js";

/** A fork blocks every client of the member for its duration; past this, a BGSAVE or rewrite is felt. */
export const FORK_SECONDS_MAX = 0.5;
/** Share of maxmemory past which writes are close to OOM errors (noeviction) or evictions. */
export const MEMORY_SHARE_MAX = 0.9;

const member = target("valkey", "valkey-0");

/** Cases for a status gauge that is 1 when fine and 0 when failing. */
const statusCases = (metric: string): AlertCase[] => [
  { what: "failing", series: [series(metric, member, "1 1 1 0+0x30")], fires: [member] },
  { what: "fine", series: [series(metric, member, "1+0x30")], fires: [] },
];

/** Cases for a counter that must not grow. */
const counterCases = (metric: string): AlertCase[] => [
  { what: "growing", series: [series(metric, member, "0+10x30")], fires: [member] },
  { what: "flat after growing long ago", series: [series(metric, member, "0+10x4 40+0x30")], fires: [] },
];

export const SERVER_DOWN: AlertDefinition = {
  alert: "ValkeyServerDown",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `redis_up{component=~"valkey|sentinel"} == 0`,
  forSeconds: () => 60,
  summary: "The exporter beside a member or Sentinel cannot reach its server for a minute (a restart takes seconds).",
  action:
    "kubectl describe the pod and read the server container's log: a start script waiting on the Sentinels says what for.",
  cases: () => [
    { what: "down", series: [series("redis_up", member, "1 0+0x30")], fires: [member] },
    // Samples every 15 s, evaluated at 10 m (sample 40): down since 9.5 m, 30 s, under the hold time.
    { what: "down for the last 30 s (a restart)", series: [series("redis_up", member, "1+0x37 0+0x5")], fires: [] },
  ],
};

/** How long ValkeyEveryMemberRestarted looks back for the restarts, and fires after them. */
const RESTART_WINDOW = "5m";
/**
 * Started within this many seconds of each other: every member restarted at once. A roll restarts them one at a time,
 * each after the one before is ready and synced (a minute or more apart on real pods).
 */
export const TOGETHER_SECONDS = 60;
/** Each member's uptime, one series per pod: a pod recreated on a new address is a new series of the same pod. */
const UPTIME_BY_POD = `max by (namespace, release, pod) (redis_uptime_in_seconds{component="valkey"})`;
/** One member's uptime in promtool's notation: 3000 s and rising, down to 0 at sample `at` (15 s samples) if given. */
const restartedAt = (pod: string, at?: number) =>
  series(
    "redis_uptime_in_seconds",
    target("valkey", pod),
    at === undefined ? "3000+15x45" : `3000+15x${at - 1} 0+15x${45 - at}`,
  );
const members = (...at: Array<number | undefined>) => at.map((a, i) => restartedAt(`valkey-${i}`, a));
/**
 * The whole release went down at once and came back, however fast: on real pods the cluster `all` drill's outage
 * (17 s) ended before any state alert's hold, and the members' exporters went down with their pods, so nothing else
 * fired (2026-12-01). Read from the uptimes: a restart is the uptime going down (a new pod's first sample after the old
 * pod's last), so a release being deployed, whose series start small, is not one.
 */
export const EVERY_MEMBER_RESTARTED: AlertDefinition = {
  alert: "ValkeyEveryMemberRestarted",
  modes: ["replication", "cluster"],
  severity: "info",
  expr: (i) => {
    const perPod = `(${UPTIME_BY_POD})[${RESTART_WINDOW}:${i.scrapeIntervalSeconds}s]`;
    // Both counts over the window: an instant count of the members answering flapped as pods came back (real pods).
    return (
      `(count by (${RELEASE_GROUP}) (resets(${perPod}) > 0) == count by (${RELEASE_GROUP}) (max_over_time(${perPod}))) ` +
      `and on (${RELEASE_GROUP}) ((max by (${RELEASE_GROUP}) (${UPTIME_BY_POD}) - min by (${RELEASE_GROUP}) (${UPTIME_BY_POD})) < ${TOGETHER_SECONDS})`
    );
  },
  forSeconds: () => 0,
  summary: `Every member of the release restarted within ${TOGETHER_SECONDS} s of the others in the last 5 minutes: the whole release was down at once, even if it was back before a state alert's hold (firing for 5 minutes after it).`,
  action:
    "Find what took every member: the pods' events and last log lines (OOMKilled, evicted, a node or zone lost, a forced delete); check the acknowledged writes the application lost against the durability settings (docs/drills.md).",
  cases: () => [
    // 15 s samples, evaluated at 10 m (sample 40).
    { what: "every member restarted 2 min ago, within 15 s", series: members(32, 33, 32), fires: [{ ...RELEASE }] },
    {
      what: "every pod recreated 2 min ago (old series stale, new ones on new addresses)",
      series: [0, 1, 2].flatMap((n) => [
        series("redis_uptime_in_seconds", target("valkey", `valkey-${n}`), "3000+15x30 stale", {
          instance: `10.0.1.${n}:9121`,
        }),
        series("redis_uptime_in_seconds", target("valkey", `valkey-${n}`), "_x32 0+15x13", {
          instance: `10.0.2.${n}:9121`,
        }),
      ]),
      fires: [{ ...RELEASE }],
    },
    {
      what: "every member restarted 2 min ago, one's series stale at the moment (a scrape lost, a pod coming back)",
      series: [
        ...members(32, undefined, 32).filter((_, n) => n !== 1),
        series("redis_uptime_in_seconds", target("valkey", "valkey-1"), "3000+15x32 0+15x6 stale"),
      ],
      fires: [{ ...RELEASE }],
    },
    { what: "a roll: each restarted a minute after the one before", series: members(28, 32, 36), fires: [] },
    { what: "one member restarted", series: members(32, undefined, undefined), fires: [] },
    {
      what: "two restarted 2 min ago beside one started 30 s before them (a member a scale-out added)",
      series: [...members(32, 32), series("redis_uptime_in_seconds", target("valkey", "valkey-2"), "_x30 0+15x15")],
      fires: [],
    },
    { what: "every member restarted 6 min ago", series: members(16, 16, 16), fires: [] },
    {
      what: "a release deployed 2 min ago (its series start small)",
      series: [0, 1, 2].map((n) => series("redis_uptime_in_seconds", target("valkey", `valkey-${n}`), "_x32 0+15x13")),
      fires: [],
    },
  ],
};

export const MEMORY_NEAR_MAX: AlertDefinition = {
  alert: "ValkeyMemoryNearMax",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () =>
    `redis_memory_used_bytes{component="valkey"} / (redis_memory_max_bytes{component="valkey"} > 0) > ${MEMORY_SHARE_MAX}`,
  forSeconds: () => 300,
  summary: `Used memory is over ${MEMORY_SHARE_MAX * 100} % of maxmemory: writes soon fail with OOM (noeviction) or keys are evicted.`,
  action:
    "Raise valkey.maxmemory with resources.requests.memory, add shards (cluster mode), or set TTLs; check fragmentation (redis_mem_fragmentation_ratio).",
  cases: () => [
    {
      what: "95 % of maxmemory",
      series: [
        series("redis_memory_used_bytes", member, "95+0x60"),
        series("redis_memory_max_bytes", member, "100+0x60"),
      ],
      fires: [member],
    },
    {
      what: "80 % of maxmemory",
      series: [
        series("redis_memory_used_bytes", member, "80+0x60"),
        series("redis_memory_max_bytes", member, "100+0x60"),
      ],
      fires: [],
    },
    {
      what: "no maxmemory set",
      series: [
        series("redis_memory_used_bytes", member, "95+0x60"),
        series("redis_memory_max_bytes", member, "0+0x60"),
      ],
      fires: [],
    },
  ],
};

export const EVICTIONS: AlertDefinition = {
  alert: "ValkeyEvictingKeys",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `increase(redis_evicted_keys_total{component="valkey"}[5m]) > 0`,
  forSeconds: () => 0,
  summary: "Keys were evicted in the last 5 minutes: the dataset does not fit maxmemory.",
  action: "See ValkeyMemoryNearMax; if the data is a cache, this may be intended (maxmemory-policy).",
  cases: () => counterCases("redis_evicted_keys_total"),
};

export const REJECTED_CONNECTIONS: AlertDefinition = {
  alert: "ValkeyRejectingConnections",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `increase(redis_rejected_connections_total{component="valkey"}[5m]) > 0`,
  forSeconds: () => 0,
  summary: "Connections were refused in the last 5 minutes (maxclients reached).",
  action: "Find the client that opens connections without closing them (CLIENT LIST), or raise maxclients.",
  cases: () => counterCases("redis_rejected_connections_total"),
};

export const AOF_WRITE: AlertDefinition = {
  alert: "ValkeyAofWriteFailing",
  modes: ["replication", "cluster"],
  severity: "critical",
  expr: () => `redis_aof_last_write_status{component="valkey"} == 0`,
  forSeconds: () => 0,
  summary: "The last AOF write failed: the member refuses writes until the disk accepts them again.",
  action: "Check the data volume (full, read-only, EBS detached) in the member's log.",
  cases: () => statusCases("redis_aof_last_write_status"),
};

export const AOF_REWRITE: AlertDefinition = {
  alert: "ValkeyAofRewriteFailing",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `redis_aof_last_bgrewrite_status{component="valkey"} == 0`,
  forSeconds: () => 0,
  summary: "The last AOF rewrite failed: the AOF keeps growing and a restart replays more of it.",
  action: "The member's log names the cause (fork failed: memory overcommit; disk full).",
  cases: () => statusCases("redis_aof_last_bgrewrite_status"),
};

export const RDB_SAVE: AlertDefinition = {
  alert: "ValkeyRdbSaveFailing",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `redis_rdb_last_bgsave_status{component="valkey"} == 0`,
  forSeconds: () => 0,
  summary:
    "The last RDB save failed: backups and full resyncs that need a snapshot fail too (stop-writes-on-bgsave-error refuses writes).",
  action: "The member's log names the cause (fork failed, disk full).",
  cases: () => statusCases("redis_rdb_last_bgsave_status"),
};

export const FORK_SLOW: AlertDefinition = {
  alert: "ValkeyForkSlow",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () => `redis_latest_fork_seconds{component="valkey"} > ${FORK_SECONDS_MAX}`,
  forSeconds: () => 0,
  summary: `The last fork (BGSAVE, AOF rewrite, full sync) blocked every client for more than ${FORK_SECONDS_MAX} s.`,
  action:
    "Large datasets fork slowly: use more, smaller shards, or schedule snapshots off-peak; transparent huge pages make it worse.",
  cases: () => [
    { what: "0.8 s fork", series: [series("redis_latest_fork_seconds", member, "0.8+0x30")], fires: [member] },
    { what: "0.02 s fork", series: [series("redis_latest_fork_seconds", member, "0.02+0x30")], fires: [] },
  ],
};
