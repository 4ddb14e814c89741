/**
 * The stand-in's replication-under-Sentinel half (pod-valkeys.ts calls it): for a Sentinel pod, the
 * pod's own sentinel-start.sh starting a real `valkey-server --sentinel` on the pod IP
 * (sentinelLaunch, as local mode runs it, with the release ConfigMap's master name, quorum and
 * timings); for a data member, the rendered entrypoint itself with the Sentinel start decision
 * (memberLaunch, as local mode runs it). kwok pods have no cluster DNS,
 * so every pod DNS name the rendered files carry (ordinal 0's in `sentinel monitor`, the
 * Sentinels' in the members' list) is replaced by that pod's IP, and each server announces its
 * pod IP.
 *
 * A member recreated on a new IP runs without the release's persistence (an empty data dir):
 * on a real cluster, a member that restarts with its data under its stable DNS name is followed
 * by the Sentinels and replicas (they resolve the name again); here they know it by its old IP,
 * so it would come back as an orphan primary nobody replicates from. An empty member takes the
 * entrypoint's other path, which IP-addressed Sentinels can follow: it asks them for a failover
 * and replicates from the new primary. Cluster members (pod-valkeys.ts) keep their persistence:
 * a cluster follows a node ID to its new address by itself.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { bulkHex } from "../../../pod/haproxy-cfg.js";
import { memberLaunch, sentinelLaunch } from "../../../harness/local/replication-launch.js";
import type { SentinelTimings } from "../../../pod/sentinel-conf.js";
import type { LocalFleet, ValkeyProcess } from "../../../harness/local/valkey-process.js";

const INSTANCE = "app.kubernetes.io/instance";
export const SENTINEL_NAME_LABEL = "valkey-sentinel";

/** `<pod>.<headless>.<ns>.svc.cluster.local` → the pod's name. */
const podOf = (dns: string): string => dns.split(".")[0] ?? dns;

export interface SentinelStandInContext {
  core: k8s.CoreV1Api;
  namespace: string;
  fleet: LocalFleet;
  password: string | undefined;
  /** Pod name → IP of every pod of the namespace (this tick). */
  ips: Map<string, string>;
}

async function configOf(ctx: SentinelStandInContext, pod: k8s.V1Pod): Promise<Record<string, string>> {
  const release = pod.metadata?.labels?.[INSTANCE] ?? "valkey";
  const cm = await ctx.core.readNamespacedConfigMap({ name: `${release}-config`, namespace: ctx.namespace });
  return cm.data ?? {};
}

/**
 * The persistence of the release's rendered valkey.conf (`appendonly`, `save`), so a member
 * restarted in its directory comes back with what its AOF/RDB kept, as a pod on its PVC does
 * (the default deployment has both on). Without a release ConfigMap (a bare StatefulSet in a
 * test): none.
 */
export async function persistenceOf(
  core: k8s.CoreV1Api,
  namespace: string,
  pod: k8s.V1Pod,
): Promise<{ appendonly: boolean; save: string }> {
  const release = pod.metadata?.labels?.[INSTANCE];
  if (release === undefined) return { appendonly: false, save: "" };
  const conf =
    (await core.readNamespacedConfigMap({ name: `${release}-config`, namespace })).data?.["valkey.conf"] ?? "";
  const save = /^save (.*)$/m.exec(conf)?.[1]?.trim() ?? '""';
  return { appendonly: /^appendonly yes$/m.test(conf), save: save.replace(/^"(.*)"$/, "$1") };
}

/**
 * The release's sentinel.conf template as the launch options of its Sentinel: the master name,
 * the primary's DNS name and port, the quorum and the timings, each read from its line.
 */
export function sentinelTemplateOptions(
  template: string,
  pod: string,
): { masterName: string; primaryDns: string; primaryPort: number; quorum: number; timings: SentinelTimings } {
  const monitor = /^sentinel monitor (\S+) (\S+) (\d+) (\d+)$/m.exec(template);
  if (monitor === null) throw new Error(`${pod}: sentinel.conf has no 'sentinel monitor' line`);
  const [, masterName = "", primaryDns = "", port = "", quorum = ""] = monitor;
  const timing = (directive: string): number => {
    const m = new RegExp(`^sentinel ${directive} ${masterName} (\\d+)$`, "m").exec(template);
    if (m === null) throw new Error(`${pod}: sentinel.conf has no 'sentinel ${directive} ${masterName}' line`);
    return Number(m[1]);
  };
  return {
    masterName,
    primaryDns,
    primaryPort: Number(port),
    quorum: Number(quorum),
    timings: {
      downAfterMs: timing("down-after-milliseconds"),
      failoverTimeoutMs: timing("failover-timeout"),
      parallelSyncs: timing("parallel-syncs"),
    },
  };
}

/**
 * Starts the Sentinel of `pod` by the pod's own files (sentinelLaunch: sentinel-start.sh on the
 * template sentinelPod renders, with the release's master name, quorum and timings), or returns
 * undefined while ordinal 0 has no IP yet.
 */
export async function startSentinelPod(
  ctx: SentinelStandInContext,
  pod: k8s.V1Pod,
): Promise<ValkeyProcess | undefined> {
  const name = pod.metadata?.name ?? "?";
  const ip = pod.status?.podIP as string;
  const template = (await configOf(ctx, pod))["sentinel.conf"];
  if (template === undefined) throw new Error(`${name}: the release ConfigMap has no sentinel.conf`);
  const o = sentinelTemplateOptions(template, name);
  const primaryIp = ctx.ips.get(podOf(o.primaryDns));
  if (primaryIp === undefined) return undefined;
  return ctx.fleet.start({
    name,
    bind: ip,
    port: 26379,
    launch: sentinelLaunch({
      name,
      host: ip,
      port: 26379,
      ...(ctx.password === undefined ? {} : { password: ctx.password }),
      masterName: o.masterName,
      primary: { host: primaryIp, port: o.primaryPort },
      quorum: o.quorum,
      timings: o.timings,
    }),
  });
}

/**
 * Starts the data member of `pod` by the rendered entrypoint, or undefined while a Sentinel has no
 * IP yet. `previousIp`: the address the pod had before it was deleted and recreated. The
 * Sentinels know a member by what it announced; a real member announces its stable DNS name,
 * which the recreated pod keeps, so its entrypoint recognises itself in the Sentinels' answer
 * (is_me). Here members announce IPs, so the old IP is given as the entrypoint's second identity
 * (VALKEY_ANNOUNCE_IP) to keep that recognition.
 */
export async function startMemberPod(
  ctx: SentinelStandInContext,
  pod: k8s.V1Pod,
  previousIp?: string,
): Promise<ValkeyProcess | undefined> {
  const name = pod.metadata?.name ?? "?";
  const ip = pod.status?.podIP as string;
  const start = (await configOf(ctx, pod))["start.sh"] ?? "";
  const list = /^sentinels='?([^'\n]*)'?$/m.exec(start)?.[1]?.trim();
  const master = /^master_name='([^']+)'$/m.exec(start)?.[1];
  if (list === undefined || list === "" || master === undefined)
    throw new Error(`${name}: start.sh carries no Sentinel list or master name`);
  const sentinels: string[] = [];
  for (const s of list.split(/\s+/)) {
    const sip = ctx.ips.get(podOf(s));
    if (sip === undefined) return undefined;
    sentinels.push(`${sip}:${s.split(":").pop() ?? "26379"}`);
  }
  const launch = memberLaunch({
    name,
    host: ip,
    port: 6379,
    password: ctx.password,
    sentinels,
    masterName: master,
    // Without persistence, unlike the release (see the file comment: an empty member is the
    // path IP-addressed Sentinels can follow).
    server: { appendonly: false, save: "" },
    sentinel: { waitSeconds: 60, firstStartGraceSeconds: 2, agreementSeconds: 5, failoverRetrySeconds: 20 },
  });
  return ctx.fleet.start({
    name,
    bind: ip,
    port: 6379,
    startTimeoutMs: 90_000,
    launch: (c) => {
      const cmd = launch(c);
      return previousIp === undefined ? cmd : { ...cmd, env: { ...cmd.env, VALKEY_ANNOUNCE_IP: previousIp } };
    },
  });
}

export const HAPROXY_NAME_LABEL = "valkey-haproxy";

/**
 * Starts a real HAProxy for an HAProxy pod: the haproxy.cfg from the release's Secret (what the
 * pod mounts), with the members' and Sentinels' DNS names replaced by their pod IPs (in the server
 * lines, and in the Sentinel reply the quorum checks expect, since the stand-ins announce IPs), the
 * frontends bound to the pod IP and the write checks' status step pointed at it; undefined while a
 * member or Sentinel has no IP yet.
 */
export async function startHaproxyPod(ctx: SentinelStandInContext, pod: k8s.V1Pod): Promise<ValkeyProcess | undefined> {
  const name = pod.metadata?.name ?? "?";
  const ip = pod.status?.podIP as string;
  const release = pod.metadata?.labels?.[INSTANCE] ?? "valkey";
  const secret = await ctx.core.readNamespacedSecret({ name: `${release}-haproxy`, namespace: ctx.namespace });
  const b64 = secret.data?.["haproxy.cfg"];
  if (b64 === undefined) throw new Error(`${name}: Secret ${release}-haproxy has no haproxy.cfg`);
  let cfg = Buffer.from(b64, "base64").toString("utf8");
  for (const m of cfg.matchAll(/^ {2}server (\S+) (\S+):(\d+) /gm)) {
    const podIp = ctx.ips.get(m[1] ?? "");
    if (podIp === undefined) return undefined;
    // The quorum checks match the Sentinels' reply as an uppercase hex regex (haproxy-checks.ts).
    cfg = cfg
      .replace(`${m[2]}:${m[3]}`, `${podIp}:${m[3]}`)
      .replaceAll(bulkHex(m[2] ?? "").toUpperCase(), bulkHex(podIp).toUpperCase());
  }
  cfg = cfg
    .replace(/ resolvers \S+ resolve-prefer ipv4 init-addr \S+/g, "")
    .replace(/^ {2}bind \*:/gm, `  bind ${ip}:`)
    .replace(/^ {2}tcp-check connect addr 127\.0\.0\.1 /gm, `  tcp-check connect addr ${ip} `);
  const haproxy = process.env.HAPROXY ?? "haproxy";
  return ctx.fleet.start({
    name,
    bind: ip,
    port: 6379,
    // The proxy answers PING once its write backend has the primary up.
    startTimeoutMs: 60_000,
    launch: ({ dir }) => {
      const file = join(dir, "haproxy.cfg");
      writeFileSync(file, cfg, { mode: 0o600 });
      return { command: haproxy, args: ["-f", file, "-db"] };
    },
  });
}
