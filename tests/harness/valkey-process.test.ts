import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveBinaries, MissingBinaryError } from "../../benchmarks/run/binaries.js";
import { parseToolVersion } from "../../benchmarks/run/tool-version.js";
import { renderLocalValkeyConf } from "../../harness/local/valkey-config-file.js";
import { LocalFleet, liveServerCount, waitForPing } from "../../harness/local/valkey-process.js";
import { startLocalReplication } from "../../harness/local/local-replication.js";
import { openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { running } from "../../core/util/process-reaper.js";

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("binaries", () => {
  it("reads versions from both tools' --version formats", () => {
    expect(parseToolVersion("Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64")).toBe("9.1.2");
    expect(parseToolVersion("redis-benchmark 7.0.15")).toBe("7.0.15");
    expect(parseToolVersion("no version here")).toBeUndefined();
  });

  it("resolves a real server and benchmark client with versions", () => {
    const b = resolveBinaries();
    expect(b.server.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(b.benchmark.path).toMatch(/(valkey|redis)-benchmark$/);
  });

  it("names the env var when nothing is found", () => {
    expect(() => resolveBinaries({ PATH: "/nonexistent" })).toThrow(MissingBinaryError);
    expect(() => resolveBinaries({ PATH: "/nonexistent" })).toThrow(/set VALKEY_SERVER/);
    expect(() => resolveBinaries({ PATH: "", VALKEY_SERVER: "/etc/passwd" })).toThrow(
      "VALKEY_SERVER=/etc/passwd is not an executable file",
    );
  });
});

describe("valkey.conf rendering", () => {
  it("puts the password in the file and cluster settings when asked", () => {
    const conf = renderLocalValkeyConf({
      port: 7000,
      clusterPort: 17001,
      dir: "/tmp/x",
      logfile: "/tmp/x/log",
      password: 'p"w',
      clusterEnabled: true,
      ioThreads: 2,
    });
    expect(conf).toContain('requirepass "p\\"w"');
    expect(conf).toContain("cluster-enabled yes");
    expect(conf).toContain("cluster-port 17001");
    expect(conf).toContain("io-threads 2");
    expect(conf).not.toContain("protected-mode no");
  });
});

describe("local valkey processes", () => {
  const fleet = new LocalFleet();
  afterAll(() => fleet.stopAll());

  it("starts a password-protected replication set, keeps the password off argv, and stops it", async () => {
    const password = "s3cret-" + Math.random().toString(36).slice(2);
    const before = liveServerCount();
    const set = await startLocalReplication(fleet, { replicas: 2, zones: ["a", "b", "c"], password });
    expect(liveServerCount()).toBe(before + 3);
    const all = [set.primary, ...set.replicas];
    for (const s of all) {
      const cmdline = readFileSync(`/proc/${s.pid}/cmdline`, "utf8");
      expect(cmdline).not.toContain(password);
      expect(statSync(join(s.dir, "valkey.conf")).mode & 0o077).toBe(0);
    }
    const client = await openClient(set.primary.host, set.primary.port, set.primary.address, { password });
    const info = parseInfo(await client.info("replication"));
    client.disconnect();
    expect(info.get("role")).toBe("master");
    expect(info.get("connected_slaves")).toBe("2");
    expect(Object.values(set.zoneMap)).toEqual(["a", "b", "c"]);

    await expect(
      openClient(set.primary.host, set.primary.port, set.primary.address, { password: "wrong" }),
    ).rejects.toThrow(/cannot reach .*authentication failed/);

    await Promise.all(all.map((s) => s.stop()));
    for (const s of all) expect(pidAlive(s.pid)).toBe(false);
    expect(liveServerCount()).toBe(before);
  });

  it("ends what a member's start left running when the member dies, as a container's processes end with its PID 1, and nices all of it", async () => {
    const launch = ({ port, dir, logfile }: { port: number; dir: string; logfile: string }) => {
      writeFileSync(join(dir, "valkey.conf"), renderLocalValkeyConf({ port, dir, logfile }), { mode: 0o600 });
      // A background loop as start.sh leaves heal.sh and the failback loop, then the server in the script's place.
      const script = `sleep 600 & echo $! > "${dir}/bg.pid"; exec "${resolveBinaries().server.path}" valkey.conf`;
      return { command: "sh", args: ["-c", script] };
    };
    const member = await fleet.start({ name: "pod", launch, nice: 7 });
    const bg = Number(readFileSync(join(member.dir, "bg.pid"), "utf8"));
    expect(pidAlive(bg)).toBe(true);
    // /proc/<pid>/stat field 19 is the niceness (after the parenthesised command name).
    const niceOf = (pid: number): number =>
      Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[16]);
    expect([niceOf(member.pid), niceOf(bg)]).toEqual([7, 7]);
    member.signal("SIGKILL");
    // Killed but not yet reaped (a zombie) counts as ended (the reaper's own test).
    await pollUntil(() => Promise.resolve(running(bg) ? `its background child ${bg} is still running` : true), {
      timeoutMs: 10_000,
      what: "the killed member's background child to end with it",
    });
    await expect(fleet.start({ name: "bad-nice", nice: 20 })).rejects.toThrow(
      "nice: 20 is not an integer from 1 to 19",
    );
  });

  it("reports a server that cannot start with its log", async () => {
    await expect(fleet.start({ name: "bad", extra: { "no-such-directive": "1" } })).rejects.toThrow(
      /exited during start-up \(bad\); log tail/,
    );
  });
});

describe("waitForPing", () => {
  it("keeps retrying against a listener that accepts and closes at once (a proxy with no backend), then gives up at its deadline", async () => {
    let accepted = 0;
    const server = createServer((sock) => {
      accepted++;
      sock.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const started = Date.now();
    try {
      await expect(waitForPing("127.0.0.1", port, 1500, () => false)).rejects.toThrow(
        /did not answer PING within 1500 ms/,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(accepted).toBeGreaterThan(3);
    } finally {
      server.close();
    }
  });
});
