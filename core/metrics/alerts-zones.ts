/**
 * The zone alert: a primary with no replica outside its own zone, the shard a zone loss would take
 * down. It needs each target's `zone` (the node's topology.kubernetes.io/zone, which the scrape job
 * and the PodMonitors attach: scrape-config.ts); a primary without one is not judged.
 *
 * A primary's replicas are its exporter's `redis_connected_slave_lag_seconds` series, one per
 * replica, named by `slave_ip` and `slave_port`: in cluster mode the replica's pod IP (the address
 * it connects from), matched to the member whose target has that IP and whose server that port
 * (`redis_instance_info`'s `tcp_port`); in replication mode the replica's announced DNS name
 * (`replica-announce-ip`), matched to the member whose pod is that name's first label. A replica
 * matched to no scraped member does not count.
 */
import { RELEASE, series, steady, target, type AlertCase, type AlertDefinition } from "./alert-definition.js";

const LINKS = `redis_connected_slave_lag_seconds{component="valkey"}`;
const MEMBERS = `redis_instance_info{component="valkey", zone!=""}`;
const KEY = "namespace, release, peer";

/** The links whose replica is a scraped member in another zone than the primary: both sides keyed by `peer`. */
function elsewhere(links: string, members: string): string {
  return `((${links} and on (${KEY}) ${members}) unless on (${KEY}, zone) ${members})`;
}

/**
 * By address (cluster mode): the replica's `slave_ip:slave_port` against the member's target IP and
 * its server's `tcp_port` (pods differ by IP; local processes by port).
 */
const BY_ADDRESS = elsewhere(
  `label_join(${LINKS}, "peer", ":", "slave_ip", "slave_port")`,
  `label_join(label_replace(${MEMBERS}, "peer_ip", "$1", "instance", "(.+):[0-9]+"), "peer", ":", "peer_ip", "tcp_port")`,
);
/** By name (replication mode): the announced name's first label and the port against the member's pod and port. */
const BY_NAME = elsewhere(
  `label_join(label_replace(${LINKS}, "peer_host", "$1", "slave_ip", "([a-z][-a-z0-9]*)(\\\\..*)?"), "peer", ":", "peer_host", "slave_port")`,
  `label_join(${MEMBERS}, "peer", ":", "pod", "tcp_port")`,
);

const POD_A = { ip: "10.0.1.10", zone: "us-west-2a" };
const POD_B = { ip: "10.0.2.11", zone: "us-west-2b" };

/** A primary valkey-0 and a replica valkey-1, each with its zone and target address; the primary's link to it. */
function shard(o: { replicaZone?: string; slaveIp?: string; zones?: boolean; link?: boolean }): AlertCase["series"] {
  const zoned = o.zones ?? true;
  const member = (pod: string, at: { ip: string; zone: string }, zone: string) => ({
    instance: `${at.ip}:9121`,
    ...(zoned ? { zone } : {}),
    ...target("valkey", pod),
  });
  const primary = member("valkey-0", POD_A, POD_A.zone);
  const replica = member("valkey-1", POD_B, o.replicaZone ?? POD_B.zone);
  return [
    series("redis_up", primary, steady(1)),
    series("redis_up", replica, steady(1)),
    series("redis_instance_info", primary, steady(1), { role: "master", tcp_port: "6379" }),
    series("redis_instance_info", replica, steady(1), { role: "slave", tcp_port: "6379" }),
    ...(o.link === false
      ? []
      : [
          series("redis_connected_slave_lag_seconds", primary, steady(0), {
            slave_ip: o.slaveIp ?? POD_B.ip,
            slave_port: "6379",
            slave_state: "online",
          }),
        ]),
  ];
}

const FIRES = [{ ...RELEASE, pod: "valkey-0", zone: POD_A.zone }];
const DNS_NAME = "valkey-1.valkey-headless.db.svc.cluster.local";

export const NO_REPLICA_ELSEWHERE: AlertDefinition = {
  alert: "ValkeyPrimaryWithoutReplicaInAnotherZone",
  modes: ["replication", "cluster"],
  severity: "warning",
  expr: () =>
    `max by (namespace, release, pod, zone) (redis_instance_info{component="valkey", role="master", zone!=""}) ` +
    `unless on (namespace, release, pod) count by (namespace, release, pod) (${BY_ADDRESS} or ${BY_NAME})`,
  forSeconds: () => 300,
  summary:
    "A primary has had no replica outside its own zone for 5 minutes (none at all, or only in its zone): losing that zone leaves the shard without a member to promote.",
  action:
    "Find where its replicas are (the pods' nodes and zones) and why: a replica pod pending or crash-looping, or both scheduled into one zone after a zone loss. Once a replica runs in another zone it pairs again (the cluster bootstrap's AZ-aware pairing, the replication start script).",
  cases: () => [
    { what: "replica in another zone (cluster mode: by IP)", series: shard({}), at: "6m", fires: [] },
    { what: "replica in the primary's zone", series: shard({ replicaZone: POD_A.zone }), at: "6m", fires: FIRES },
    { what: "no replica", series: shard({ link: false }), at: "6m", fires: FIRES },
    {
      what: "replica announced by name in another zone (replication mode)",
      series: shard({ slaveIp: DNS_NAME }),
      at: "6m",
      fires: [],
    },
    {
      what: "replica announced by name in the primary's zone",
      series: shard({ slaveIp: DNS_NAME, replicaZone: POD_A.zone }),
      at: "6m",
      fires: FIRES,
    },
    { what: "replica unknown to the scrape", series: shard({ slaveIp: "10.0.9.9" }), at: "6m", fires: FIRES },
    { what: "no zone attached", series: shard({ zones: false }), at: "6m", fires: [] },
    {
      what: "replica in the primary's zone for 4 minutes",
      series: shard({ replicaZone: POD_A.zone }),
      at: "4m",
      fires: [],
    },
  ],
};
