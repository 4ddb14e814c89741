/**
 * One pod, one definition: the manifests mount exactly the files of the pod definitions
 * (pod/cluster-member.ts, pod/replication-member.ts) and run exactly their commands, and the local
 * launches (the drills' cluster members, the Sentinel topology's members) write the same files
 * and run the same command. Compared after rendering both: the local files may differ from the
 * deployed ones only in paths, addresses and numbers (ports, the drills' shorter clocks), and
 * their valkey.conf only by the local lines appended after the deployed ones.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildClusterManifests } from "../../components/valkey/cluster-manifests.js";
import { buildReplicationManifests } from "../../components/valkey/replication-manifests.js";
import { clusterPodLaunch } from "../../harness/drill/cluster-pod.js";
import { memberLaunch, sentinelLaunch } from "../../harness/local/replication-launch.js";
import type { LaunchCommand } from "../../harness/local/valkey-process.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import type { PodDefinition } from "../../pod/definition.js";
import { CONFIG_MOUNT, DATA_DIR, RUN_DIR, SECRET_MOUNT, PASSWORD_SECRET_KEY } from "../../pod/paths.js";
import { replicationMemberPod } from "../../pod/replication-member.js";
import { sentinelPod } from "../../pod/sentinel.js";
import { PLACEMENT, valkeyConfig } from "../support/valkey-fixtures.js";

const root = mkdtempSync(join(tmpdir(), "pod-definition-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cluster = valkeyConfig({
  mode: "cluster",
  cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 5000 },
});
const replication = valkeyConfig();

function container(sts: ReturnType<typeof buildClusterManifests>["statefulSet"]) {
  const c = sts.spec?.template?.spec?.containers?.[0];
  if (c === undefined) throw new Error("no container");
  return c as unknown as {
    command: string[];
    env: { name: string }[];
    lifecycle?: { preStop?: { exec?: { command?: string[] } } };
    readinessProbe?: { exec?: { command?: string[] } };
  };
}

/** The manifest runs exactly `def`: its files in the ConfigMap, its command, preStop, readiness and env. */
function expectManifestRuns(
  data: Record<string, string>,
  sts: ReturnType<typeof buildClusterManifests>["statefulSet"],
  def: PodDefinition,
): void {
  for (const [name, text] of Object.entries(def.files)) expect(data[name], name).toBe(text);
  const c = container(sts);
  expect(c.command).toEqual(def.command);
  expect(c.lifecycle?.preStop?.exec?.command).toEqual(def.preStop);
  expect(c.readinessProbe?.exec?.command).toEqual(def.readiness);
  expect(c.env.map((e) => e.name).sort()).toEqual([...def.env].sort());
}

/** Runs a local launch in a fresh dir; returns what it wrote and its command. */
function launchLocally(
  launch: (ctx: { host: string; port: number; dir: string; logfile: string }) => LaunchCommand,
  host: string,
  port: number,
) {
  const dir = mkdtempSync(join(root, "pod-"));
  const cmd = launch({ host, port, dir, logfile: join(dir, "server.log") });
  const files = Object.fromEntries(
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => [e.name, readFileSync(join(dir, e.name), "utf8")]),
  );
  return { dir, cmd, files };
}

/** Replaces a local launch's paths, addresses and numbers with the deployed ones' placeholders. */
function normalise(text: string, local: { dir: string; host: string; passwordFile: string; dataDir: string }): string {
  return text
    .split(local.passwordFile)
    .join(`${SECRET_MOUNT}/${PASSWORD_SECRET_KEY}`)
    .split(local.dataDir)
    .join(DATA_DIR)
    .split(join(local.dir, "run"))
    .join(RUN_DIR)
    .split(local.dir)
    .join(CONFIG_MOUNT)
    .split(local.host)
    .join("127.0.0.1")
    .replace(/\d+/g, "N");
}

function expectSamePod(
  deployed: PodDefinition,
  local: ReturnType<typeof launchLocally>,
  paths: { host: string; passwordFile: string; dataDir: string },
  confKey: string,
): void {
  const n = (t: string) => normalise(t, { dir: local.dir, ...paths });
  expect(Object.keys(local.files).sort()).toEqual(Object.keys(deployed.files).sort());
  expect([local.cmd.command, ...local.cmd.args].map(n)).toEqual(deployed.command.map((a) => a.replace(/\d+/g, "N")));
  for (const name of Object.keys(deployed.files)) {
    if (name === confKey) continue;
    expect(
      n(local.files[name] ?? ""),
      `${name}: the local file differs from the deployed one beyond paths, addresses and numbers`,
    ).toBe((deployed.files[name] ?? "").replace(/\d+/g, "N"));
  }
  // valkey.conf: the deployed lines (but the listen address), then the local ones after them.
  const deployedConf = (deployed.files[confKey] ?? "")
    .replace(/\d+/g, "N")
    .split("\n")
    .filter((l) => !l.startsWith("bind "));
  const localConf = n(local.files[confKey] ?? "").split("\n");
  const cut = localConf.indexOf("# local process: the lines below override the deployed ones above");
  expect(cut).toBeGreaterThan(0);
  expect(localConf.slice(0, cut).filter((l) => !l.startsWith("bind "))).toEqual(deployedConf.filter((l) => l !== ""));
  for (const name of deployed.env) expect(local.cmd.env?.[name], `the local launch sets ${name}`).toBeDefined();
}

describe("one pod, one definition", () => {
  it("cluster member: the manifests mount and run exactly the definition; the drills' local member runs the same files", () => {
    const m = buildClusterManifests({
      namespace: "valkey",
      release: "valkey",
      valkey: cluster,
      placement: PLACEMENT,
      auth: true,
    });
    const deployed = clusterMemberPod({ valkey: cluster, auth: true });
    expect(Object.keys(m.configMap.data ?? {}).sort()).toEqual(Object.keys(deployed.files).sort());
    expectManifestRuns(m.configMap.data as Record<string, string>, m.statefulSet, deployed);

    const host = "127.0.0.9";
    const dataDir = join(root, "cluster-data");
    const passwordFile = join(root, "cluster-password");
    const local = launchLocally(
      clusterPodLaunch(
        { name: "member-0", hostname: "member-0.local", zone: "zone-a", host, port: 7000, busPort: 17000, dataDir },
        {
          valkey: cluster,
          nodeTimeoutMs: 2000,
          passwordFile,
          hostsFile: join(root, "hosts"),
          zoneLabel: true,
          cliEnv: { VALKEYCLI_AUTH: "x", REDISCLI_AUTH: "x" },
        },
      ),
      host,
      7000,
    );
    expectSamePod(deployed, local, { host, passwordFile, dataDir }, "valkey.conf");
    // The drift this test was written for: the local failback kept no zone file while the pod's did.
    expect(local.files["failback.sh"]).toContain(`\nzone_file='${dataDir}/availability-zone'\n`);
  });

  it("replication member: the manifests mount and run exactly the definition; the Sentinel topology's member runs the same files", () => {
    const m = buildReplicationManifests({
      namespace: "valkey",
      release: "valkey",
      valkey: replication,
      placement: PLACEMENT,
      auth: true,
    });
    const sentinels = m.facts.sentinels.map((s) => `${s.dnsName}:26379`);
    const deployed = replicationMemberPod({
      valkey: replication,
      auth: true,
      masterName: m.facts.masterName,
      sentinels,
    });
    expectManifestRuns(m.configMap.data as Record<string, string>, m.statefulSet, deployed);

    const host = "127.0.0.10";
    const local = launchLocally(
      memberLaunch({
        name: "member-1",
        host,
        port: 7001,
        password: "x",
        sentinels: sentinels.map((_, i) => `127.0.0.${11 + i}:26379`),
        masterName: m.facts.masterName,
        valkey: replication,
      }),
      host,
      7001,
    );
    // The local member's Sentinel list is its own: put the deployed one in its place before comparing.
    for (const name of Object.keys(local.files))
      sentinels.forEach((s, i) => {
        local.files[name] = (local.files[name] ?? "").split(`127.0.0.${11 + i}:26379`).join(s);
      });
    const dir = local.dir;
    expectSamePod(
      deployed,
      local,
      { host, passwordFile: join(dir, "secret", "password"), dataDir: join(dir, "data") },
      "valkey.conf",
    );
  });

  it("Sentinel: the manifests run exactly the definition; the local Sentinel runs the same start script on the same template", () => {
    const m = buildReplicationManifests({
      namespace: "valkey",
      release: "valkey",
      valkey: replication,
      placement: PLACEMENT,
      auth: true,
    });
    const s = replication.replication.sentinel;
    const timings = {
      downAfterMs: s.downAfterMilliseconds,
      failoverTimeoutMs: s.failoverTimeoutMs,
      parallelSyncs: s.parallelSyncs,
    };
    const primary = { host: m.facts.pods[0]?.dnsName ?? "", port: 6379 };
    const deployed = sentinelPod({
      ...timings,
      auth: true,
      masterName: m.facts.masterName,
      primary,
      quorum: s.quorum,
      hostnames: true,
    });
    for (const [name, text] of Object.entries(deployed.files)) expect(m.configMap.data?.[name], name).toBe(text);
    const c = container(m.sentinel.statefulSet);
    expect(c.command).toEqual(deployed.command);
    // POD_NAME besides: VALKEY_ANNOUNCE_HOST is built from $(POD_NAME) (components/valkey/pod-env.ts).
    expect(c.env.map((e) => e.name).sort()).toEqual(["POD_NAME", ...deployed.env].sort());

    const host = "127.0.0.13";
    const local = launchLocally(
      sentinelLaunch({
        name: "sentinel-0",
        host,
        port: 26400,
        password: "x",
        masterName: m.facts.masterName,
        primary: { host: "127.0.0.14", port: 7003 },
        quorum: s.quorum,
        timings,
      }),
      host,
      26400,
    );
    const configDir = join(local.dir, "config");
    const written = Object.fromEntries(
      Object.keys(deployed.files).map((name) => [name, readFileSync(join(configDir, name), "utf8")]),
    );
    const n = (t: string) =>
      normalise(t, { dir: local.dir, host, passwordFile: join(local.dir, "secret", "password"), dataDir: local.dir })
        .split(`${DATA_DIR}/config`)
        .join(CONFIG_MOUNT);
    expect(n(written["sentinel-start.sh"] ?? "")).toBe(
      (deployed.files["sentinel-start.sh"] ?? "").replace(/\d+/g, "N"),
    );
    expect([local.cmd.command, ...local.cmd.args].map(n)).toEqual(deployed.command);
    // The template: the deployed lines but the local ones (listen address, log file, source
    // address) and the pod DNS names (a local Sentinel monitors and announces IPs).
    const localOnly = /^(bind |logfile |bind-source-addr |sentinel (resolve|announce)-hostnames )/;
    const lines = (t: string) =>
      t
        .replace(/\d+/g, "N")
        .split("\n")
        .filter((l) => !localOnly.test(l));
    const monitor = (t: string) => t.replace(/^sentinel monitor (\S+) \S+ /m, "sentinel monitor $1 PRIMARY ");
    expect(lines(monitor(n(written["sentinel.conf"] ?? "")))).toEqual(
      lines(monitor(deployed.files["sentinel.conf"] ?? "")),
    );
    for (const name of deployed.env) expect(local.cmd.env?.[name], `the local launch sets ${name}`).toBeDefined();
  });

  it("a launch that does not set a variable the pod's scripts read is refused, naming it", () => {
    const host = "127.0.0.12";
    const launch = clusterPodLaunch(
      { name: "member-0", hostname: "m", zone: "z", host, port: 7002, busPort: 17002, dataDir: join(root, "d2") },
      { nodeTimeoutMs: 2000, passwordFile: join(root, "p2"), hostsFile: join(root, "h2"), cliEnv: {}, zoneLabel: true },
    );
    expect(() => launchLocally(launch, host, 7002)).toThrow(
      /member-0: the pod's scripts read VALKEYCLI_AUTH, REDISCLI_AUTH, which the local launch does not set/,
    );
  });
});

describe("env references", () => {
  it("every $(VAR) in a container's env is defined before it in that env (else Kubernetes leaves the text as it is), in both modes", () => {
    const built = [
      buildClusterManifests({
        namespace: "valkey",
        release: "valkey",
        valkey: cluster,
        placement: PLACEMENT,
        auth: true,
      }).statefulSet,
      ...(() => {
        const m = buildReplicationManifests({
          namespace: "valkey",
          release: "valkey",
          valkey: replication,
          placement: PLACEMENT,
          auth: true,
        });
        return [m.statefulSet, m.sentinel.statefulSet];
      })(),
    ];
    let checked = 0;
    for (const sts of built) {
      const spec = sts.spec?.template?.spec as unknown as {
        containers: { name: string; env?: { name: string; value?: string }[] }[];
        initContainers?: { name: string; env?: { name: string; value?: string }[] }[];
      };
      for (const ctr of [...spec.containers, ...(spec.initContainers ?? [])]) {
        const env = ctr.env ?? [];
        env.forEach((e, i) => {
          for (const [, ref] of (e.value ?? "").matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
            checked++;
            expect(
              env.slice(0, i).map((x) => x.name),
              `${sts.metadata?.name}/${ctr.name}: ${e.name} uses $(${ref})`,
            ).toContain(ref);
          }
        });
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3); // the members of both modes and the Sentinels announce $(POD_NAME)-based names
  });
});
