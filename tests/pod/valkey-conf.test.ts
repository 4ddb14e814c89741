import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { renderStartScript } from "../../pod/start-script.js";
import { RDB_SAVE_SCHEDULE, renderValkeyConf, valkeyConfLines } from "../../pod/valkey-conf.js";
import { renderPreStopScript } from "../../pod/prestop-script.js";
import { renderClusterHealScript } from "../../pod/cluster-heal-script.js";
import { renderReadinessScript } from "../../pod/readiness-script.js";
import { renderAzFailbackScript } from "../../pod/az-failback-script.js";
import {
  PASSWORD,
  cli,
  freePort,
  podTree,
  rmSync,
  run,
  startWithScript,
  valkeyConfig,
  type ScriptServer,
} from "../support/valkey-fixtures.js";

const started: ScriptServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("valkey.conf lines", () => {
  const v = valkeyConfig();

  it("carries io-threads, maxmemory, policy and persistence from the config", () => {
    const lines = valkeyConfLines(v, { role: { kind: "primary" } });
    expect(lines).toEqual(
      expect.arrayContaining([
        "port 6379",
        "protected-mode no",
        'dir "/data"',
        "io-threads 3",
        "maxmemory 9663676416",
        "maxmemory-policy allkeys-lru",
        "appendonly yes",
        "appendfsync everysec",
        `save "${RDB_SAVE_SCHEDULE}"`,
        "min-replicas-to-write 1",
        'include "/run/valkey/auth.conf"',
        'include "/run/valkey/announce.conf"',
      ]),
    );
    // The includes come last so the generated values win.
    expect(lines.slice(-2)).toEqual(['include "/run/valkey/auth.conf"', 'include "/run/valkey/announce.conf"']);
    expect(lines.some((l) => l.startsWith("replicaof"))).toBe(false);
    expect(lines.some((l) => l.startsWith("cluster-"))).toBe(false);
  });

  it("turns RDB and AOF off when persistence says so", () => {
    const off = valkeyConfig({ persistence: { ...v.persistence, aof: false, rdb: false, appendfsync: "always" } });
    const lines = valkeyConfLines(off, { role: { kind: "primary" } });
    expect(lines).toContain("appendonly no");
    expect(lines).toContain('save ""');
    expect(lines).toContain("appendfsync always");
  });

  it("points replicas at the primary's stable DNS name", () => {
    const lines = valkeyConfLines(v, {
      role: { kind: "replica", primaryHost: "valkey-primary-0.valkey-headless.valkey.svc.cluster.local" },
    });
    expect(lines).toContain("replicaof valkey-primary-0.valkey-headless.valkey.svc.cluster.local 6379");
    expect(lines).toContain("replica-read-only yes");
  });

  it("renders cluster settings with the hostname endpoint type and nodes.conf on the data volume", () => {
    const lines = valkeyConfLines(v, { role: { kind: "cluster-member" } });
    expect(lines).toEqual(
      expect.arrayContaining([
        "cluster-enabled yes",
        'cluster-config-file "/data/nodes.conf"',
        "cluster-node-timeout 12000",
        "cluster-port 16379",
        "cluster-preferred-endpoint-type hostname",
        "io-threads 3",
      ]),
    );
    expect(lines.some((l) => l.startsWith("min-replicas-to-write"))).toBe(false);
  });

  it("never renders a password into valkey.conf", () => {
    for (const kind of ["primary", "cluster-member"] as const) {
      const text = renderValkeyConf(v, { role: { kind } });
      expect(text).not.toMatch(/requirepass|masterauth/);
    }
  });
});

describe("scripts", () => {
  it("are valid POSIX sh (sh -n)", async () => {
    const tree = podTree(undefined);
    dirs.push(tree.root);
    const scripts = {
      "start-repl.sh": renderStartScript({ mode: "replication", auth: true }),
      "start-cluster.sh": renderStartScript({ mode: "cluster", auth: false }),
      "start-cluster-heal.sh": renderStartScript({
        mode: "cluster",
        auth: true,
        backgroundScripts: ["/etc/valkey/heal.sh", "/etc/valkey/failback.sh"],
      }),
      "failback.sh": renderAzFailbackScript(),
      "prestop.sh": renderPreStopScript(),
      "heal.sh": renderClusterHealScript(),
      "readiness-cluster.sh": renderReadinessScript({ mode: "cluster" }),
      "readiness-repl.sh": renderReadinessScript({ mode: "replication" }),
    };
    for (const [file, text] of Object.entries(scripts)) {
      const path = join(tree.root, file);
      writeFileSync(path, text);
      await expect(run("sh", ["-n", path])).resolves.toBeDefined();
    }
  });

  it("starts the heal step only in cluster mode, in the background, before the exec", () => {
    expect(() => renderStartScript({ mode: "replication", auth: true, backgroundScripts: ["/x/heal.sh"] })).toThrow(
      /cluster mode only/,
    );
    expect(renderStartScript({ mode: "cluster", auth: true })).toMatch(/^background=''$/m);
    expect(() => renderStartScript({ mode: "cluster", auth: true, backgroundScripts: ["/x/a b.sh"] })).toThrow(
      /must be a plain path/,
    );
    const s = renderStartScript({ mode: "cluster", auth: true, backgroundScripts: ["/x/heal.sh", "/x/failback.sh"] });
    expect(s).toMatch(/^background='\/x\/heal\.sh \/x\/failback\.sh'$/m);
    // Run for real (heal, then failback exec'd, both given the server's pid) by
    // cluster-heal-script.test.ts and az-failback-script.test.ts; here: the loop sits before the exec.
    expect(
      s.endsWith(
        `  ( set -- $background; while [ $# -gt 1 ]; do sh "$1" "$$"; shift; done; exec sh "$1" "$$" ) </dev/null &\nfi\nexec valkey-server "$conf"\n`,
      ),
    ).toBe(true);
  });

  it("bounds every valkey-cli call and never passes the password on argv", () => {
    for (const s of [
      renderClusterHealScript(),
      renderReadinessScript({ mode: "cluster" }),
      renderPreStopScript(),
      renderAzFailbackScript(),
    ]) {
      expect(s).toContain(`cli_within() { w_bound=$1; shift; timeout "$w_bound" "$cli_bin" "$@" </dev/null; }`);
      expect(s).toContain(`cli() { cli_within "$cli_timeout" "$@"; }`);
      // Every call goes through cli/local_cli: valkey-cli is named only in the binary default.
      expect(s.match(/valkey-cli/g)).toEqual(["valkey-cli"]);
      expect(s).not.toMatch(/ -a |--pass|--user/);
    }
    expect(() => renderClusterHealScript({ deadlineSeconds: 0 })).toThrow(/deadlineSeconds/);
    expect(() => renderReadinessScript({ mode: "cluster", localHost: "$(reboot)" })).toThrow(/local host/);
  });

  it("keeps the password off every command line: read from the file, written with builtins", () => {
    const s = renderStartScript({ mode: "replication", auth: true });
    expect(s).toContain(`password=$(cat "$password_file")`);
    expect(s).toContain("/etc/valkey-secret/password");
    expect(s).toMatch(/exec valkey-server "\$conf"$/m);
    expect(s).not.toMatch(/--requirepass|-a /);
  });
});

describe("rendered config against a real valkey-server", () => {
  it("replication: primary + replica start from the rendered files; auth include works; replica announces its DNS name", async () => {
    const v = valkeyConfig();
    const [pPort, rPort] = [await freePort(), await freePort()];
    const trees = [podTree(PASSWORD), podTree(PASSWORD)] as const;
    dirs.push(...trees.map((t) => t.root));
    const [pt, rt] = trees;
    const paths = (t: (typeof trees)[number]) => ({ dataDir: t.dataDir, runDir: t.runDir, bind: "127.0.0.1" });
    const script = (t: (typeof trees)[number]) =>
      renderStartScript({
        mode: "replication",
        auth: true,
        passwordFile: t.passwordFile,
        runDir: t.runDir,
        dataDir: t.dataDir,
      });
    const primary = await startWithScript(
      pt.root,
      pPort,
      script(pt),
      renderValkeyConf(v, { role: { kind: "primary" }, port: pPort, ...paths(pt) }),
      {
        VALKEY_ANNOUNCE_HOST: "valkey-primary-0.test",
      },
    );
    started.push(primary);
    const replicaConf = renderValkeyConf(v, {
      role: { kind: "replica", primaryHost: "127.0.0.1", primaryPort: pPort },
      port: rPort,
      ...paths(rt),
    });
    const replica = await startWithScript(rt.root, rPort, script(rt), replicaConf, {
      VALKEY_ANNOUNCE_HOST: "valkey-replica-0.test",
    });
    started.push(replica);

    // Without the password: NOAUTH. With it (from the environment): PONG.
    await expect(cli(pPort, ["ping"])).resolves.toMatch(/NOAUTH/);
    expect(await cli(pPort, ["ping"], PASSWORD)).toBe("PONG");
    expect(await cli(pPort, ["config", "get", "io-threads"], PASSWORD)).toBe("io-threads\n3");
    expect(await cli(pPort, ["config", "get", "maxmemory"], PASSWORD)).toBe("maxmemory\n9663676416");
    expect(await cli(pPort, ["config", "get", "appendonly"], PASSWORD)).toBe("appendonly\nyes");
    expect(await cli(pPort, ["config", "get", "min-replicas-to-write"], PASSWORD)).toBe("min-replicas-to-write\n1");

    // The replica authenticates with masterauth from the include and announces its DNS name.
    const deadline = Date.now() + 15_000;
    let info = "";
    while (Date.now() < deadline) {
      info = await cli(pPort, ["info", "replication"], PASSWORD);
      if (/slave0:ip=valkey-replica-0\.test,port=\d+,state=online/.test(info)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(info).toMatch(/slave0:ip=valkey-replica-0\.test,port=\d+,state=online/);
    // The primary lists the replica online before the replica has loaded the RDB: poll its side too.
    let replicaInfo = "";
    while (Date.now() < deadline + 15_000) {
      replicaInfo = await cli(rPort, ["info", "replication"], PASSWORD);
      if (/master_link_status:up/.test(replicaInfo)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(replicaInfo).toMatch(/master_link_status:up/);

    // The generated include is private to the valkey user.
    expect(statSync(join(pt.runDir, "auth.conf")).mode & 0o077).toBe(0);
    expect(readFileSync(join(pt.runDir, "announce.conf"), "utf8")).toBe(
      'replica-announce-ip "valkey-primary-0.test"\n',
    );
  });

  /** A cluster member's pod tree (removed after the file) and its valkey.conf, on free ports, without auth. */
  async function clusterMemberTree(): Promise<{ port: number; t: ReturnType<typeof podTree>; conf: string }> {
    const [port, bus] = [await freePort(), await freePort()];
    const t = podTree(undefined);
    dirs.push(t.root);
    const conf = renderValkeyConf(valkeyConfig({ mode: "cluster", auth: { enabled: false } }), {
      role: { kind: "cluster-member" },
      port,
      busPort: bus,
      dataDir: t.dataDir,
      runDir: t.runDir,
      bind: "127.0.0.1",
    });
    return { port, t, conf };
  }

  it("cluster: a member starts cluster-enabled, announces its hostname and keeps nodes.conf on the data volume", async () => {
    const { port, t, conf } = await clusterMemberTree();
    const script = renderStartScript({ mode: "cluster", auth: false, runDir: t.runDir, dataDir: t.dataDir });
    const host = "valkey-cluster-0.valkey-cluster-headless.valkey.svc.cluster.local";
    const s = await startWithScript(t.root, port, script, conf, {
      VALKEY_ANNOUNCE_HOST: host,
      POD_NAME: "valkey-cluster-0",
    });
    started.push(s);
    expect(await cli(port, ["config", "get", "cluster-announce-hostname"])).toBe(`cluster-announce-hostname\n${host}`);
    expect(await cli(port, ["config", "get", "cluster-preferred-endpoint-type"])).toBe(
      "cluster-preferred-endpoint-type\nhostname",
    );
    expect(await cli(port, ["config", "get", "cluster-announce-human-nodename"])).toBe(
      "cluster-announce-human-nodename\nvalkey-cluster-0",
    );
    expect(await cli(port, ["config", "get", "cluster-node-timeout"])).toBe("cluster-node-timeout\n12000");
    expect(await cli(port, ["info", "cluster"])).toMatch(/cluster_enabled:1/);
    expect(existsSync(join(t.dataDir, "nodes.conf"))).toBe(true);
  });

  it("cluster start holds automatic failover on a restart (nodes.conf on the volume) when the heal step runs to release it; not on a first start, nor without the heal step", async () => {
    const { port, t, conf } = await clusterMemberTree();
    const env = { VALKEY_ANNOUNCE_HOST: "valkey-cluster-0.h", POD_NAME: "valkey-cluster-0" };
    const noFailover = async (holdFailover: boolean): Promise<string> => {
      const script = renderStartScript({
        mode: "cluster",
        auth: false,
        runDir: t.runDir,
        dataDir: t.dataDir,
        holdFailover,
      });
      const s = await startWithScript(t.root, port, script, conf, env);
      started.push(s);
      try {
        return await cli(port, ["config", "get", "cluster-replica-no-failover"]);
      } finally {
        await s.stop();
      }
    };
    expect(await noFailover(true)).toBe("cluster-replica-no-failover\nno");
    expect(existsSync(join(t.dataDir, "nodes.conf"))).toBe(true);
    expect(await noFailover(true)).toBe("cluster-replica-no-failover\nyes");
    expect(await noFailover(false)).toBe("cluster-replica-no-failover\nno");
    expect(() => renderStartScript({ mode: "replication", auth: false, holdFailover: true })).toThrow(
      "holdFailover is for cluster mode only",
    );
  });

  it("cluster start writes availability-zone for this valkey-server (>= 8.1), and leaves it out when --version reports 8.0 (a version-string stub)", async () => {
    const t = podTree(undefined);
    dirs.push(t.root);
    writeFileSync(
      join(t.root, "start.sh"),
      renderStartScript({ mode: "cluster", auth: false, runDir: t.runDir, dataDir: t.dataDir }),
    );
    const env = { ...process.env, VALKEY_ANNOUNCE_HOST: "m-0.test", VALKEY_AVAILABILITY_ZONE: "use1-az1" };
    // The exec fails on the missing conf; announce.conf is written before it.
    await expect(run("sh", [join(t.root, "start.sh"), "/nonexistent.conf"], { env })).rejects.toThrow();
    expect(readFileSync(join(t.runDir, "announce.conf"), "utf8")).toContain('availability-zone "use1-az1"\n');

    const bin = join(t.root, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "valkey-server"),
      '#!/bin/sh\necho "Valkey server v=8.0.2 sha=00000000:0 malloc=libc bits=64"\nexit 1\n',
      { mode: 0o755 },
    );
    const old = { ...env, PATH: `${bin}:${process.env.PATH ?? ""}` };
    const failed = await run("sh", [join(t.root, "start.sh"), "/nonexistent.conf"], { env: old }).catch(
      (e: { stderr: string }) => e,
    );
    expect(failed.stderr).toContain("(version 8.0) predates availability-zone (8.1); not setting it");
    expect(readFileSync(join(t.runDir, "announce.conf"), "utf8")).not.toContain("availability-zone");
  });

  it("cluster start refuses to run without the pod's DNS name", async () => {
    const t = podTree(undefined);
    dirs.push(t.root);
    const script = renderStartScript({ mode: "cluster", auth: false, runDir: t.runDir, dataDir: t.dataDir });
    writeFileSync(join(t.root, "start.sh"), script);
    const env = { ...process.env, VALKEY_ANNOUNCE_HOST: "" };
    await expect(run("sh", [join(t.root, "start.sh"), "/nonexistent.conf"], { env })).rejects.toThrow(
      /VALKEY_ANNOUNCE_HOST/,
    );
  });
});
