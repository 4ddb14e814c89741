/**
 * Full restart of a cluster on NEW addresses, on real valkey-server processes: a 3 x 1 cluster
 * (built by the local bootstrap) with keys and announced hostnames is stopped; every member is
 * started again on a different loopback address with its data dir, through the same rendered
 * start.sh + heal.sh + valkey.conf a pod runs, with a hosts file standing in for DNS.
 * With the heal step the cluster is ok again with the same node IDs and every key; without it
 * (today's entrypoint) it stays down: the second test shows the first one can fail.
 * As on real pods, the names resolve to the old address for the first STALE_DNS_MS, and (as root)
 * the old addresses are blackholed (iptables DROP, as a deleted pod's IP answers nothing): a dial
 * to them hangs instead of being refused, so a peer's link reads "connected" for a while after the
 * start. The first heal script trusted that, the second trusted DNS; both exited at once on real
 * pods, leaving the cluster down, and both fail here; on loopback without the DROP they passed.
 * Every server's CLUSTER MYID count is read (INFO commandstats): a peer that answered is not asked
 * again at the same address, which keeps a full restart of N members at about N² asks in all, not N²
 * a round (the 200-member heal took 520 s on one host when every round asked every peer); and a
 * valkey-cli wrapper logs the client side: a member's asks go in one process, not one each.
 */
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { parseCommandstats } from "../../benchmarks/run/mix-served.js";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Partition, partitionCapability } from "../../harness/drill/partition.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { startPod, type PodProcess } from "../support/pod-process.js";
import { PASSWORD, callNode, cliPath, run, valkeyConfig } from "../support/valkey-fixtures.js";

const NODE_TIMEOUT_MS = 3000;
/** The stated bound for the whole heal, from the last member started to every member ok. */
const HEAL_BOUND_MS = 60_000;
const KEYS = 300;
/** How long the names keep resolving to the old address after the restart. */
const STALE_DNS_MS = 5000;

const valkey = valkeyConfig({
  mode: "cluster",
  ioThreads: 1,
  maxmemoryBytes: 256 * 2 ** 20,
  cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: NODE_TIMEOUT_MS },
});

interface Member {
  index: number;
  hostname: string;
  id: string;
  port: number;
  busPort: number;
  dataDir: string;
}

const roots: string[] = [];
const pods: PodProcess[] = [];
afterAll(async () => {
  await Promise.all(pods.map((p) => p.stop(2000)));
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function cliEnv(cli = cliPath()): Record<string, string> {
  return { VALKEY_CLI: cli, REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD };
}

/**
 * A valkey-cli that appends "<pod> <asks>" to LOG for every call whose commands on stdin ask CLUSTER MYID (heal.sh's
 * batches), and "<pod> argv" for a CLUSTER MYID in argv (one process per ask); it then execs the real valkey-cli with
 * the same arguments and input, so a `timeout` around it still stops the real client (the password is in the
 * environment, never in argv).
 */
function myidLoggingCli(root: string): { cli: string; log: string } {
  const cli = join(root, "valkey-cli-logging");
  const log = join(root, "myid.log");
  const real = JSON.stringify(cliPath());
  writeFileSync(
    cli,
    [
      "#!/bin/sh",
      `case "$*" in *"cluster myid"*) printf '%s argv\\n' "$POD_NAME" >> ${JSON.stringify(log)} ;; esac`,
      `[ "$#" -eq 4 ] || exec ${real} "$@"`,
      "in=$(cat)",
      "n=$(printf '%s\\n' \"$in\" | grep -c '^cluster myid$')",
      `[ "$n" -eq 0 ] || printf '%s %s\\n' "$POD_NAME" "$n" >> ${JSON.stringify(log)}`,
      `exec ${real} "$@" <<EOF`,
      "$in",
      "EOF",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return { cli, log };
}

/** A bootstrapped 3 x 1 cluster with KEYS keys and announced hostnames, stopped gracefully. */
async function formAndStop(root: string): Promise<Member[]> {
  const fleet = new LocalFleet(join(root, "fleet"));
  const c = await startLocalCluster(fleet, {
    primaries: 3,
    replicasPerPrimary: 1,
    zones: ["a", "b", "c"],
    password: PASSWORD,
    clusterNodeTimeoutMs: NODE_TIMEOUT_MS,
  });
  const client = new Cluster([{ host: c.seed.host, port: c.seed.port }], { redisOptions: { password: PASSWORD } });
  try {
    for (let i = 0; i < KEYS; i++) await client.set(`heal:${i}`, `v${i}`);
  } finally {
    client.disconnect();
  }
  const members: Member[] = c.nodes.map((n, index) => ({
    index,
    hostname: `member-${index}.heal-headless.test`,
    id: c.nodeIds[n.address] as string,
    port: n.port,
    busPort: n.clusterPort as number,
    dataDir: n.dir,
  }));
  // What the pods announce: their stable DNS names (gossiped into every nodes.conf).
  for (const [i, n] of c.nodes.entries()) {
    await callNode(n.host, n.port, "CONFIG", "SET", "cluster-announce-hostname", (members[i] as Member).hostname);
  }
  const deadline = Date.now() + 20_000;
  for (const n of c.nodes) {
    for (;;) {
      const nodes = await callNode(n.host, n.port, "CLUSTER", "NODES");
      if (members.every((m) => nodes.includes(m.hostname))) break;
      if (Date.now() > deadline) throw new Error(`hostnames did not reach ${n.address}:\n${nodes}`);
      await sleep(200);
    }
  }
  // Replicas carry the keys before the stop (WAIT on every primary).
  for (const p of c.primaries) await callNode(p.host, p.port, "WAIT", "1", "5000");
  await Promise.all(c.nodes.map((n) => n.stop(10_000)));
  for (const m of members) {
    const conf = readFileSync(join(m.dataDir, "nodes.conf"), "utf8");
    for (const peer of members) expect(conf, `nodes.conf of member ${m.index}`).toContain(peer.hostname);
    expect(conf).toContain("127.0.0.1:");
  }
  return members;
}

/** Starts every member as a pod on 127.0.0.<base + index>, the old ports, the old data dirs. */
async function restartAsPods(
  root: string,
  members: Member[],
  base: number,
  heal: boolean,
  staleDnsMs = 0,
  cli = cliPath(),
): Promise<PodProcess[]> {
  const hostsFile = join(root, "hosts");
  const hosts = (ip: (m: Member) => string): void =>
    writeFileSync(hostsFile, members.map((m) => `${ip(m)} ${m.hostname}`).join("\n") + "\n");
  if (staleDnsMs > 0) {
    // DNS still answers with the old address for a while, as the endpoints and CoreDNS's cache lag.
    hosts(() => "127.0.0.1");
    setTimeout(() => hosts((m) => `127.0.0.${base + m.index}`), staleDnsMs).unref();
  } else hosts((m) => `127.0.0.${base + m.index}`);
  writeFileSync(join(root, "password"), PASSWORD, { mode: 0o600 });
  const started = await Promise.all(
    members.map((m) => {
      const host = `127.0.0.${base + m.index}`;
      const dir = join(root, `pod-${m.index}`);
      const pod = clusterMemberPod({
        valkey,
        auth: true,
        configDir: dir,
        runDir: join(dir, "run"),
        dataDir: m.dataDir,
        passwordFile: join(root, "password"),
        port: m.port,
        busPort: m.busPort,
        localHost: host,
        bind: host,
        background: heal ? ["heal"] : [],
        heal: { intervalSeconds: 1, deadlineSeconds: 120 },
      });
      return startPod(`member-${m.index}`, dir, host, m.port, pod, {
        ...cliEnv(cli),
        POD_NAME: `member-${m.index}`,
        VALKEY_ANNOUNCE_HOST: m.hostname,
        VALKEY_ANNOUNCE_IP: host,
        // No zone label (Kubernetes < 1.35): start.sh then reads the zone file, absent here.
        VALKEY_AVAILABILITY_ZONE: "",
        VALKEY_HEAL_HOSTS_FILE: hostsFile,
      });
    }),
  );
  pods.push(...started);
  return started;
}

/**
 * Healed = cluster_state:ok and every peer's link connected at its new address. (cluster_state
 * alone reads ok for a moment after a restart, before the dead links are detected.)
 */
async function healed(p: PodProcess, pods: PodProcess[], members: Member[]): Promise<boolean> {
  if ((await clusterState(p)) !== "ok") return false;
  const lines = (await callNode(p.host, p.port, "CLUSTER", "NODES")).split("\n");
  return members.every((m, i) => {
    const line = lines.find((l) => l.startsWith(`${m.id} `)) ?? "";
    const at = `${(pods[i] as PodProcess).host}:${m.port}@${m.busPort}`;
    return line.split(" ")[1]?.startsWith(at) === true && (line.includes("myself") || / connected/.test(line));
  });
}

/**
 * Counted by the servers (INFO commandstats, since their start at the new addresses): every member answered CLUSTER
 * MYID at least once per peer (each peer's identity check before a MEET or before calling it linked), and in all at
 * most one ask in ten more than one per member-peer pair: a peer that answered is not asked again (a link that reads
 * down for a round drops its proof). Counted by the client (the logging valkey-cli): every ask went in a batch, one
 * process asking several peers, none in argv (one process per ask was 39,800 processes for a full restart of 200
 * members on one host).
 */
async function expectEachPeerAskedOnceInBatches(log: string, pods: PodProcess[]): Promise<void> {
  const calls = await Promise.all(
    pods.map(async (p) => {
      const stats = parseCommandstats(await callNode(p.host, p.port, "INFO", "commandstats"));
      return stats.get("cluster|myid")?.calls ?? 0;
    }),
  );
  const peers = pods.length - 1;
  const table = pods.map((p, i) => `${p.name}: answered ${calls[i]}`).join("\n");
  expect(
    calls.filter((n) => n < peers),
    `members asked fewer times than they have peers:\n${table}`,
  ).toEqual([]);
  const total = calls.reduce((a, b) => a + b, 0);
  expect(total, `CLUSTER MYID answered by the servers:\n${table}`).toBeLessThanOrEqual(
    Math.ceil(1.1 * pods.length * peers),
  );
  const lines = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
  const asks = lines.map((l) => l.split(" ")[1] as string);
  expect(
    asks.filter((a) => a === "argv"),
    "CLUSTER MYID asked in argv (one process per ask)",
  ).toEqual([]);
  const sent = asks.reduce((a, b) => a + Number(b), 0);
  console.log(
    `[heal] CLUSTER MYID answered ${total} times for ${pods.length * peers} member-peer pairs (servers' commandstats);` +
      ` ${sent} asks sent in ${lines.length} client processes`,
  );
  expect(Math.max(...asks.map(Number)), `asks per client process:\n${lines.join("\n")}`).toBeGreaterThan(1);
  expect(lines.length, `client processes that asked:\n${lines.join("\n")}`).toBeLessThan(sent);
}

async function clusterState(p: PodProcess): Promise<string> {
  const info = await callNode(p.host, p.port, "CLUSTER", "INFO");
  return /cluster_state:(\w+)/.exec(info)?.[1] ?? "unknown";
}

async function ready(p: PodProcess): Promise<boolean> {
  try {
    await run("sh", [join(p.dir, "readiness.sh")], { env: { ...process.env, ...cliEnv() } });
    return true;
  } catch {
    return false;
  }
}

describe("full cluster restart on new addresses (real valkey-server, rendered pod scripts)", () => {
  it("heals: cluster_state:ok on every member within the bound, same node IDs, new addresses, every key", async () => {
    const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-heal-"));
    roots.push(root);
    const members = await formAndStop(root);
    const cap = partitionCapability();
    const ports = members.flatMap((m) => [m.port, m.busPort]);
    const old = { host: "127.0.0.1", ports };
    const blackhole = cap.ok ? await Partition.cut(cap.iptables, old, [old]) : undefined;
    console.log(
      `[heal] old addresses ${blackhole ? `blackholed: ${blackhole.describe()}` : `answer with a reset (no blackhole: ${cap.ok ? "" : cap.reason})`}`,
    );
    const myid = myidLoggingCli(root);
    const t0 = Date.now();
    const started = await restartAsPods(root, members, 101, true, STALE_DNS_MS, myid.cli).catch((e: unknown) => {
      blackhole?.heal();
      throw e;
    });

    let healedMs = -1;
    while (Date.now() - t0 < HEAL_BOUND_MS) {
      const states = await Promise.all(started.map((p) => healed(p, started, members)));
      if (states.every(Boolean)) {
        healedMs = Date.now() - t0;
        break;
      }
      await sleep(250);
    }
    const logs = started
      .map(
        (p) =>
          `--- ${p.name}\n${p
            .log()
            .split("\n")
            .filter((l) => l.startsWith("heal:"))
            .join("\n")}`,
      )
      .join("\n");
    blackhole?.heal();
    expect(
      healedMs,
      `not every member was ok with every peer connected at its new address within ${HEAL_BOUND_MS} ms\n${logs}`,
    ).toBeGreaterThan(0);
    console.log(`[heal] all 6 members ok, every peer connected at its new address, ${healedMs} ms after the restart`);

    // Still ok after twice the node timeout (no transient ok before failure detection).
    await sleep(2 * NODE_TIMEOUT_MS + 1000);
    expect(await Promise.all(started.map(clusterState))).toEqual(started.map(() => "ok"));

    // Before this test asks CLUSTER MYID itself.
    await expectEachPeerAskedOnceInBatches(myid.log, started);
    for (const [i, p] of started.entries()) {
      const m = members[i] as Member;
      expect(await callNode(p.host, p.port, "CLUSTER", "MYID")).toBe(m.id);
      const myself =
        (await callNode(p.host, p.port, "CLUSTER", "NODES")).split("\n").find((l) => l.includes("myself")) ?? "";
      expect(myself).toContain(`${m.id} ${p.host}:${m.port}@${m.busPort},${m.hostname}`);
      expect(await ready(p), `readiness of ${p.name}`).toBe(true);
    }
    expect(logs).toMatch(/met member-\d\.heal-headless\.test/);
    // The heal step stops by itself once healed: every member logged its exit condition, and released the hold on
    // automatic failover that start.sh puts on a restarted member (pod/start-script.ts holdFailover).
    for (const p of started) {
      expect(p.log(), p.name).toContain("heal: cluster_state:ok with all 5 peers connected");
      expect(await callNode(p.host, p.port, "CONFIG", "GET", "cluster-replica-no-failover"), p.name).toEqual(
        "cluster-replica-no-failover,no",
      );
    }

    // Clients get hostnames (cluster-preferred-endpoint-type hostname); map them like DNS would.
    const natMap = Object.fromEntries(
      members.map((m, i) => [`${m.hostname}:${m.port}`, { host: (started[i] as PodProcess).host, port: m.port }]),
    );
    const first = started[0] as PodProcess;
    const client = new Cluster([{ host: first.host, port: first.port }], {
      natMap,
      redisOptions: { password: PASSWORD },
    });
    try {
      const values = await Promise.all(Array.from({ length: KEYS }, (_, i) => client.get(`heal:${i}`)));
      expect(values).toEqual(Array.from({ length: KEYS }, (_, i) => `v${i}`));
    } finally {
      client.disconnect();
    }
    await Promise.all(started.map((p) => p.stop()));
  }, 180_000);

  // Gossip spreads the new addresses the others meet, so this heals even where one member's asks stall on the hung
  // peer; that a hung peer delays no other ask is lib-ask-myids.sh's own test (tests/pod/ask-myids.test.ts).
  it("a peer that hangs through the restart (SIGSTOPped): the other five heal meanwhile; resumed, it joins and every heal.sh finishes", async () => {
    const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-heal-hang-"));
    roots.push(root);
    const members = await formAndStop(root);
    // Names stay stale long enough to stop the victim before any member asks a new address.
    const started = await restartAsPods(root, members, 141, true, 2 * STALE_DNS_MS);
    const first = started[0] as PodProcess;
    // The replica that member-0's heal.sh asks first: CLUSTER NODES order, as its rounds read it.
    const victimId = (await callNode(first.host, first.port, "CLUSTER", "NODES"))
      .split("\n")
      .map((l) => l.split(" "))
      .find((f) => !(f[2] ?? "myself").includes("myself") && (f[2] ?? "").includes("slave"))?.[0];
    const v = members.findIndex((m) => m.id === victimId);
    expect(v, `a replica in member-0's CLUSTER NODES`).toBeGreaterThan(0);
    const victim = started[v] as PodProcess;
    victim.signal("SIGSTOP");
    const others = started.filter((_, i) => i !== v);
    const otherMembers = members.filter((_, i) => i !== v);
    try {
      await pollUntil(
        async () => {
          const states = await Promise.all(others.map((p) => healed(p, others, otherMembers)));
          return states.every(Boolean) || "the others are not all connected at their new addresses";
        },
        {
          timeoutMs: HEAL_BOUND_MS,
          intervalMs: 250,
          what: `the 5 members other than ${victim.name} (stopped) to heal`,
        },
      );
      expect(started.every((p) => p.alive())).toBe(true);
    } finally {
      victim.signal("SIGCONT");
    }
    await pollUntil(
      async () => (await Promise.all(started.map((p) => healed(p, started, members)))).every(Boolean) || "not healed",
      { timeoutMs: HEAL_BOUND_MS, intervalMs: 250, what: `every member to heal after ${victim.name} resumed` },
    );
    // Every member's heal.sh proves every peer, the resumed one too, and stops by itself.
    const done = "heal: cluster_state:ok with all 5 peers connected";
    await pollUntil(
      () => {
        const pending = started.filter((p) => !p.log().includes(done)).map((p) => p.name);
        return Promise.resolve(pending.length === 0 || `heal.sh not done on ${pending.join(", ")}`);
      },
      { timeoutMs: HEAL_BOUND_MS, intervalMs: 250, what: "every member's heal.sh to say it was healed" },
    );
    await Promise.all(started.map((p) => p.stop()));
  }, 240_000);

  it("without the heal step (today's entrypoint) the cluster stays down and no member is ready", async () => {
    const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-noheal-"));
    roots.push(root);
    const members = await formAndStop(root);
    const started = await restartAsPods(root, members, 121, false);
    await sleep(6 * NODE_TIMEOUT_MS + 2000);
    const states = await Promise.all(started.map(clusterState));
    expect(states.filter((s) => s === "ok")).toEqual([]);
    expect(await Promise.all(started.map(ready))).toEqual(started.map(() => false));
    await Promise.all(started.map((p) => p.stop()));
  }, 180_000);
});
