/**
 * A launched server counts as started only when the server answering on its port is its own
 * (harness/local/listener-owner.ts). Seen in CI under a CPU hog: a restoring member's port was
 * taken by another test file's server while its restore ran, that server answered the PING, and a
 * member whose restore failed (a corrupted object) counted as serving. Here the other server is a
 * listener this test opens on the launch's port, and the launch fails after a second, as that
 * restore did: the start must fail with the launch's own error.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  freshListeners,
  listenerIsOwn,
  processTree,
  sharedFreshRead,
  ssListeners,
} from "../../harness/local/listener-owner.js";
import { freePort } from "../../harness/local/ports.js";
import { startValkeyServer } from "../../harness/local/valkey-process.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server on `port` that answers every line with +PONG: someone else's, as far as the launch knows. */
async function foreignPong(port: number): Promise<Server> {
  const srv = createServer((sock) => sock.on("data", () => sock.write("+PONG\r\n")));
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", r));
  return srv;
}

describe("whose server answered the start's PING", () => {
  it("another process's server on the launch's port does not make a failing launch a started one", async () => {
    const port = await freePort();
    await foreignPong(port);
    await expect(
      startValkeyServer({
        name: "restoring",
        port,
        startTimeoutMs: 20_000,
        launch: () => ({
          command: "sh",
          args: ["-c", "sleep 1; echo 'restore.sh: error: shard 1: checksum mismatch' >&2; exit 1"],
        }),
      }),
    ).rejects.toThrow(/exited during start-up[\s\S]*checksum mismatch/);
  });

  it("a listener is its opener's (and its ancestors'), never a process outside that line", async () => {
    const port = await freePort();
    await foreignPong(port);
    expect(await listenerIsOwn(process.pid, port)).toBe(true);
    const child = spawn("sh", ["-c", "sleep 30 & wait"], { stdio: "ignore" });
    try {
      const pid = child.pid as number;
      // The shell's child (sleep) is in its tree once it has started.
      await expect.poll(() => processTree(pid).length, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(2);
      expect(await listenerIsOwn(pid, port)).toBe(false);
      expect(await listenerIsOwn(2 ** 22 + 7, port)).toBe(false); // no such process
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a real valkey-server still starts, and its listener is its own", async () => {
    const s = await startValkeyServer({ name: "own" });
    try {
      expect(await listenerIsOwn(s.pid, s.port)).toBe(true);
      // This test's process is its parent: the server is in its tree too.
      expect(await listenerIsOwn(process.pid, s.port)).toBe(true);
    } finally {
      await s.stop();
    }
  });
});

describe("one /proc/net/tcp read shared by many starting servers", () => {
  it("serves every caller with a read that started after its call, at most two reads at a time", async () => {
    const reads: { n: number; finish: () => void }[] = [];
    const read = sharedFreshRead(
      () =>
        new Promise<number>((resolve) => {
          const n = reads.length + 1;
          reads.push({ n, finish: () => resolve(n) });
        }),
    );
    const a = read(); // starts read 1
    const b = read(); // read 1 started before b: b waits for read 2
    const c = read(); // joins read 2
    expect(reads).toHaveLength(1);
    reads[0]?.finish();
    expect(await a).toBe(1);
    await expect.poll(() => reads.length).toBe(2);
    const d = read(); // read 2 is running and started before d: d waits for read 3
    reads[1]?.finish();
    expect([await b, await c]).toEqual([2, 2]);
    await expect.poll(() => reads.length).toBe(3);
    reads[2]?.finish();
    expect(await d).toBe(3);
    expect(reads).toHaveLength(3);
  });

  it("a failed read fails its callers, and the next callers get a new read", async () => {
    let n = 0;
    const read = sharedFreshRead(() => {
      n++;
      return n === 1 ? Promise.reject(new Error("EACCES")) : Promise.resolve(n);
    });
    await expect(read()).rejects.toThrow("EACCES");
    expect(await read()).toBe(2);
  });
});

describe("the listening sockets, from ss and from /proc/net/tcp", () => {
  it("both name this test's listener by its port and the same socket inode", async () => {
    const port = await freePort();
    await foreignPong(port);
    const viaSs = await ssListeners();
    // iproute2 is part of the machines this runs on (.ci/setup); without it this check has nothing to compare.
    expect(viaSs, "ss (iproute2) is not on PATH").toBeDefined();
    const viaProc = await freshListeners(`/proc/${process.pid}/net`);
    const inodes = viaSs?.get(port);
    expect(inodes?.size).toBe(1);
    expect(viaProc?.get(port)).toEqual(inodes);
  });

  it("ss missing or failing answers undefined (the caller reads /proc/net/tcp)", async () => {
    expect(await ssListeners("/nonexistent/ss")).toBeUndefined();
    expect(await ssListeners("false")).toBeUndefined();
  });
});
