/**
 * The drills' second client library: the valkey-py writer (core/drill/valkey_py_writer.py, PyPI
 * `valkey` in the venv .ci/setup installs) run against a real Sentinel topology. Its records go
 * into the same ledger as the ioredis streams: a key it wrote and that is then deleted counts as a
 * lost acknowledged write; a fenced primary's NOREPLICAS is a failed write, never an
 * acknowledgement; a line that is not a record is refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { loadFigures } from "../../core/drill/ledger.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { spawn } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import {
  parseWriterLine,
  VALKEY_PY_WRITER,
  valkeyPyArgs,
  valkeyPyPython,
  valkeyPyStreams,
  writerReadyBoundMs,
  writerStopBoundMs,
  type ValkeyPyStream,
} from "../../core/drill/valkey-py-stream.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { openClient } from "../../core/topology/connector.js";
import { startTestReplication } from "./drill-faults.js";

const PASSWORD = "drill-valkey-py-password";
let target: ReplicationTarget | undefined;
afterEach(async () => {
  await target?.stop();
  target = undefined;
});

describe("valkey-py writer records", () => {
  it("a record line becomes a WriteRecord (never WAIT-confirmed); anything else is refused, naming the line", () => {
    const line = JSON.stringify({
      stream: "valkey-py-sentinel",
      key: "p:s:1",
      value: "v1",
      sentAt: 1000.5,
      doneAt: 1001.25,
      ok: true,
      waited: false,
    });
    expect(parseWriterLine(line)).toEqual({
      stream: "valkey-py-sentinel",
      key: "p:s:1",
      value: "v1",
      sentAt: 1000.5,
      doneAt: 1001.25,
      ok: true,
      waited: false,
    });
    const failed = JSON.stringify({
      stream: "s",
      key: "k",
      value: "v",
      sentAt: 1,
      doneAt: 2,
      ok: false,
      error: "NOREPLICAS Not enough good replicas to write.",
    });
    expect(parseWriterLine(failed)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^NOREPLICAS/) as unknown,
    });
    // A reply other than SET's success reply: an unexpected reply (it fails the drill), never an acknowledgement.
    const odd = JSON.stringify({
      stream: "s",
      key: "k",
      value: "v",
      sentAt: 1,
      doneAt: 2,
      ok: false,
      waited: false,
      unexpectedReply: "SET → 5",
    });
    expect(parseWriterLine(odd)).toEqual({
      stream: "s",
      key: "k",
      value: "v",
      sentAt: 1,
      doneAt: 2,
      ok: false,
      waited: false,
      unexpectedReply: "SET → 5",
    });
    const figures = loadFigures(["s"], {
      records: [parseWriterLine(odd)],
      readBack: new Map(),
      faultAt: 0,
      loadStart: 0,
      loadStop: 3,
    });
    expect([figures.unexpectedReplies, figures.ackedWrites]).toEqual([1, 0]);
    expect(() =>
      parseWriterLine(
        JSON.stringify({
          stream: "s",
          key: "k",
          value: "v",
          sentAt: 1,
          doneAt: 2,
          ok: true,
          unexpectedReply: "SET → 5",
        }),
      ),
    ).toThrow(/unexpectedReply must be a string on a failed write/);
    expect(() => parseWriterLine("Traceback (most recent call last):")).toThrow(/not a JSON line: "Traceback/);
    expect(() => parseWriterLine(JSON.stringify({ stream: "s", key: "k", value: "v", sentAt: 1, ok: true }))).toThrow(
      /not a write record/,
    );
    expect(() => valkeyPyPython({})).toThrow(/VALKEY_PY_PYTHON is not set: run through \.ci\/setup/);
  });

  it("a writer whose seeds all refuse is never ready: ready() rejects with its own connection error, not a timeout", async () => {
    const port = await closedPort();
    const [stream] = valkeyPyStreams(
      { stream: "valkey-py-cluster", target: { mode: "cluster", seeds: [ep(1, port)], hostsFile: "" }, password: "" },
      { prefix: "refused", rate: 10, commandTimeoutMs: 500, settings: "recommended", enabled: true },
    );
    if (stream === undefined) throw new Error("no valkey-py stream");
    await expect(stream.ready()).rejects.toThrow(/ready\(\) before start\(\)/);
    stream.start();
    try {
      await expect(stream.ready()).rejects.toThrow(/valkey-py writer exited 1: [\s\S]*Connection refused/);
      expect(stream.records).toEqual([]);
    } finally {
      await stream.stop();
    }
  }, 60_000);

  it.each([
    [{ mode: "replication", sentinels: [ep(1), ep(2), ep(3)], masterName: "m" }, 1000, 12_000 + 30_000],
    [{ mode: "cluster", seeds: [1, 2, 3, 4, 5, 6].map((i) => ep(i)), hostsFile: "h" }, 500, 12_000 + 30_000],
  ] as const)(
    "a started writer may take every wait of building its client to be ready: %j at %i ms → %i ms",
    (target, ms, bound) => {
      expect(writerReadyBoundMs({ target, commandTimeoutMs: ms })).toBe(bound);
    },
  );

  it.each([
    // 3 Sentinels asked in turn, then the primary: connect, AUTH, command each, at 1 s.
    [{ mode: "replication", sentinels: [ep(1), ep(2), ep(3)], masterName: "m" }, 1000, 12_000 + 10_000],
    [{ mode: "replication", sentinels: [ep(1)], masterName: "m" }, 500, 3000 + 10_000],
    // 6 seeds asked for the slots, the owner, the node a MOVED names.
    [{ mode: "cluster", seeds: [1, 2, 3, 4, 5, 6].map((i) => ep(i)), hostsFile: "h" }, 1000, 24_000 + 10_000],
  ] as const)("a stopped writer may take every wait one write can make: %j at %i ms → %i ms", (target, ms, bound) => {
    expect(writerStopBoundMs({ target, commandTimeoutMs: ms })).toBe(bound);
  });
});

function ep(i: number, port = 6379): { host: string; port: number } {
  return { host: `127.0.0.${i}`, port };
}

/** A port on 127.0.0.1 nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A real Sentinel topology (one replica), a valkey-py writer on it (not started) and a client on its primary. */
async function writerOnReplication(
  prefix: string,
  rate: number,
): Promise<{ t: ReplicationTarget; stream: ValkeyPyStream; admin: Redis }> {
  const t = await startTestReplication(PASSWORD, 1);
  target = t;
  const primary = t.t.member(await t.t.primaryFromSentinels());
  const [stream] = valkeyPyStreams(t.valkeyPyTarget(), {
    prefix,
    rate,
    commandTimeoutMs: 1000,
    settings: "recommended",
    enabled: true,
  });
  if (stream === undefined) throw new Error("the Sentinel target offers no valkey-py stream");
  const admin = new Redis({ host: primary.host, port: primary.port, password: PASSWORD, maxRetriesPerRequest: 1 });
  admin.on("error", () => undefined);
  return { t, stream, admin };
}

describe("valkey-py writer on a real Sentinel topology", () => {
  it("writes through Sentinel at the rate; the ledger counts its acknowledged writes, a deleted one as lost, NOREPLICAS as failed", async () => {
    const { t, stream, admin } = await writerOnReplication("vpy", 50);
    try {
      const loadStart = Date.now();
      stream.start();
      await stream.ready();
      await sleep(3000);
      // Fenced: more good replicas required than there are; every write now gets NOREPLICAS.
      await admin.config("SET", "min-replicas-to-write", "5");
      await sleep(1000);
      await admin.config("SET", "min-replicas-to-write", "1");
      await sleep(1500);
      await stream.stop();
      const loadStop = Date.now();
      expect(stream.failure).toBeUndefined();
      const records = stream.records;
      const acked = records.filter((r) => r.ok);
      // 50 writes/s for ~5.5 s, some of them fenced.
      expect(records.length).toBeGreaterThan(200);
      expect(new Set(records.map((r) => r.key)).size).toBe(records.length);
      expect(records.filter((r) => r.error?.startsWith("NOREPLICAS")).length).toBeGreaterThan(10);
      expect(acked.length).toBeGreaterThan(150);
      expect(records.every((r) => r.stream === "valkey-py-sentinel" && !r.waited)).toBe(true);
      // Every acknowledged write is on the primary with its value; a fenced one is not.
      const fenced = records.find((r) => r.error?.startsWith("NOREPLICAS"))!;
      expect(await admin.get(fenced.key)).toBeNull();
      const lostKey = acked[Math.floor(acked.length / 2)]!.key;
      await admin.del(lostKey);
      const readBack = await t.readBack(acked.map((r) => r.key));
      const faultAt = fenced.sentAt;
      const figures = loadFigures(["valkey-py-sentinel"], { records, readBack, faultAt, loadStart, loadStop });
      const f = figures.streams[0]!;
      // The ledger's count against the server's own: every acknowledged key is on the primary (one
      // deleted above); a write failed by its deadline may have been applied too, a fenced one never.
      const onPrimary = Number(await admin.dbsize());
      expect(onPrimary).toBeGreaterThanOrEqual(f.ackedWrites - 1);
      expect(onPrimary).toBeLessThanOrEqual(records.filter((r) => !r.error?.startsWith("NOREPLICAS")).length - 1);
      expect(f.lostAckedWrites).toBe(1);
      expect(f.lostKeys).toEqual([lostKey]);
      expect(f.waitedWrites).toBe(0);
      // The fenced second is the longest gap between acknowledgements.
      expect(f.writeOutageMs).toBeGreaterThan(800);
      expect(f.writeOutageMs).toBeLessThan(3000);
    } finally {
      await stream.stop();
      admin.disconnect();
    }
  }, 90_000);

  it("recommended finds the primary with SENTINEL GET-MASTER-ADDR-BY-NAME, the library's default with SENTINEL MASTERS (the Sentinels' CLIENT LIST)", async () => {
    const t = await startTestReplication(PASSWORD, 1);
    target = t;
    // What the writer's own Sentinel connections last asked (CLIENT LIST on every Sentinel: `cmd` of each
    // connection whose lib-name is valkey-py's; Sentinel has no commandstats).
    const lastAsked = async (): Promise<string[]> => {
      const cmds: string[] = [];
      for (const s of t.t.sentinels) {
        const c = await openClient(s.host, s.port, s.address, { password: PASSWORD });
        try {
          const list = String(await c.call("CLIENT", "LIST"));
          for (const line of list.split("\n"))
            if (/ lib-name=valkey-py /.test(line)) cmds.push(/ cmd=(\S+)/.exec(line)?.[1] ?? "?");
        } finally {
          c.disconnect();
        }
      }
      return cmds;
    };
    const asked: Record<string, string[]> = {};
    for (const settings of ["recommended", "defaults"] as const) {
      const [stream] = valkeyPyStreams(t.valkeyPyTarget(), {
        prefix: `ask-${settings}`,
        rate: 20,
        commandTimeoutMs: 1000,
        settings,
        enabled: true,
      });
      if (stream === undefined) throw new Error("the Sentinel target offers no valkey-py stream");
      stream.start();
      try {
        await pollUntil(
          () => Promise.resolve(stream.records.filter((r) => r.ok).length >= 5 ? true : "fewer than 5 acknowledged"),
          { timeoutMs: 20_000, what: `the ${settings} writer's first writes` },
        );
        asked[settings] = await lastAsked();
      } finally {
        await stream.stop();
      }
      expect(stream.failure).toBeUndefined();
    }
    expect(asked.recommended, "the recommended writer's Sentinel connections").toEqual([
      "sentinel|get-master-addr-by-name",
    ]);
    expect(asked.defaults, "the default writer's Sentinel connections").toEqual(["sentinel|masters"]);
  }, 90_000);

  it("SIGUSR1 (sent when it overstays its stop bound) prints every thread's stack on stderr and the writer goes on", async () => {
    const t = await startTestReplication(PASSWORD, 1);
    target = t;
    const spec = t.valkeyPyTarget();
    if (spec === undefined) throw new Error("the Sentinel target offers no valkey-py stream");
    const args = valkeyPyArgs({ ...spec, prefix: "vpyd", rate: 20, commandTimeoutMs: 1000, settings: "recommended" });
    const child = spawn(valkeyPyPython(), [VALKEY_PY_WRITER, ...args], {
      env: { ...process.env, VALKEY_PASSWORD: PASSWORD, PYTHONUNBUFFERED: "1" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
    try {
      const lines = (): number => out.split("\n").length - 1;
      await pollUntil(() => Promise.resolve(lines() >= 5 || `${lines()} records`), {
        timeoutMs: 20_000,
        what: "5 records",
      });
      child.kill("SIGUSR1");
      await pollUntil(() => Promise.resolve(/most recent call first/.test(err) || "no stack yet"), {
        timeoutMs: 10_000,
        what: "the writer's stacks on stderr",
      });
      expect(err).toMatch(/Thread 0x[0-9a-f]+/);
      expect(err).toContain("valkey_py_writer.py");
      const before = lines();
      await pollUntil(() => Promise.resolve(lines() >= before + 5 || `${lines() - before} records since`), {
        timeoutMs: 20_000,
        what: "5 more records after SIGUSR1",
      });
    } finally {
      child.kill("SIGTERM");
    }
    expect(await closed).toBe(0);
  }, 60_000);

  it("stopped while writes queue behind a paused primary: the queued writes are dropped, never sent after the stop", async () => {
    // 1000 writes/s against at most 512 workers whose writes each hang for the 1 s deadline: a queue builds.
    const { stream, admin } = await writerOnReplication("vpyq", 1000);
    try {
      stream.start();
      await pollUntil(
        () =>
          Promise.resolve(
            stream.records.some((r) => r.ok) ? true : `${stream.records.length} records, none acknowledged`,
          ),
        {
          timeoutMs: 20_000,
          what: "the writer's first acknowledged write",
        },
      );
      // Writes (not Sentinel's PING/INFO) wait while paused: no failover, every write hits its deadline.
      await admin.call("CLIENT", "PAUSE", "15000", "WRITE");
      const failed = () => stream.records.filter((r) => !r.ok).length;
      await pollUntil(() => Promise.resolve(failed() >= 1000 || `${failed()} failed so far`), {
        timeoutMs: 20_000,
        what: "1000 writes failed by their deadline",
      });
      const stopAt = Date.now();
      await stream.stop();
      expect(stream.failure).toBeUndefined();
      const late = stream.records.filter((r) => r.sentAt > stopAt + 1000);
      expect(late.length, `writes sent more than 1 s after the stop (first: ${JSON.stringify(late[0])})`).toBe(0);
    } finally {
      await stream.stop();
      await admin.call("CLIENT", "UNPAUSE").catch(() => undefined);
      admin.disconnect();
    }
  }, 90_000);
});
