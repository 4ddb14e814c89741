/**
 * A write is acknowledged only when SET answers exactly `OK`. A real valkey-server whose `SET`
 * is APPEND (rename-command in an included file) still stores every value, but answers the new
 * length (an integer): both writers (no-WAIT and WAIT) must record unexpected replies, never
 * acknowledgements, and the drill's verdict must fail naming them. The same writers against an
 * unmodified server pass, so the failure is the reply's and nothing else's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drillFailures, drillOk, loadFigures } from "../../core/drill/ledger.js";
import { plainRedis, WriteStream } from "../../core/drill/load.js";
import { streamName, type Writer } from "../../core/drill/writers.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { sleep } from "../../core/util/poll-until.js";

const WINDOW = { fromMs: -1000, toMs: 1000, reason: "test window" };

/**
 * Runs one writer for ~800 ms against `server`, reads every key back, and computes the drill's figures and failures.
 */
async function drillAgainst(server: ValkeyProcess, writer: Writer) {
  const stream = streamName({ client: "direct", writer });
  const client = plainRedis(server.host, server.port, undefined, 1000);
  // The load starts once connected (as the drills' do), so connecting is no failed write.
  for (let i = 0; client.status !== "ready" && i < 200; i++) await sleep(10);
  const w = new WriteStream({
    stream,
    prefix: `unexpected-${writer}`,
    // No replica: each WAIT runs to its timeout on the writer's one connection, so the WAIT writer goes slower.
    rate: writer === "wait" ? 25 : 100,
    writer,
    waitTimeoutMs: writer === "wait" ? 10 : 0,
    client: { kind: "redis", client },
  });
  const loadStart = Date.now();
  w.start();
  await sleep(800);
  const loadStop = Date.now();
  await w.stop();
  const reader = plainRedis(server.host, server.port, undefined, 2000);
  try {
    await sleep(100);
    const values = await Promise.all(w.records.map((r) => reader.get(r.key)));
    const readBack = new Map(w.records.map((r, i) => [r.key, values[i] ?? undefined]));
    const figures = loadFigures([stream], {
      records: w.records,
      readBack,
      bound: WINDOW,
      faultAt: loadStart + 200,
      loadStart,
      loadStop,
    });
    return {
      records: w.records,
      readBack,
      figures,
      failures: drillFailures(true, figures),
      ok: drillOk(true, figures),
    };
  } finally {
    reader.disconnect();
  }
}

describe("unexpected replies to SET (real valkey-server)", () => {
  let fleet: LocalFleet;
  let appendAsSet: ValkeyProcess;
  let plain: ValkeyProcess;

  beforeAll(async () => {
    fleet = new LocalFleet();
    const renames = join(fleet.baseDir, "set-is-append.conf");
    writeFileSync(renames, "rename-command SET SET-ORIGINAL\nrename-command APPEND SET\n");
    [appendAsSet, plain] = await Promise.all([
      fleet.start({ name: "set-is-append", includes: [renames] }),
      fleet.start({ name: "plain" }),
    ]);
  }, 30_000);

  afterAll(async () => {
    await fleet?.stopAll();
  });

  for (const writer of ["no-wait", "wait"] as const) {
    it(`${writer} writer: SET answering an integer is an unexpected reply, never acknowledged, and the drill fails naming it`, async () => {
      const r = await drillAgainst(appendAsSet, writer);
      expect(r.records.length).toBeGreaterThan(10);
      // The server did store every value (APPEND on a new key): only the reply is wrong.
      expect(r.records.every((x) => r.readBack.get(x.key) === x.value)).toBe(true);
      for (const x of r.records) {
        expect(x.ok, JSON.stringify(x)).toBe(false);
        expect(x.unexpectedReply, JSON.stringify(x)).toMatch(/^SET → \d+$/);
      }
      expect(r.figures.ackedWrites).toBe(0);
      expect(r.figures.unexpectedReplies).toBe(r.records.length);
      expect(r.ok).toBe(false);
      expect(r.failures).toContainEqual(
        expect.stringMatching(new RegExp(`^${r.records.length} unexpected replies .*direct.*SET → \\d+`)),
      );
    });

    it(`${writer} writer: the same load against an unmodified server is acknowledged and ok`, async () => {
      const r = await drillAgainst(plain, writer);
      expect(r.records.length).toBeGreaterThan(10);
      expect(r.records.every((x) => x.ok && x.unexpectedReply === undefined)).toBe(true);
      expect(r.figures.unexpectedReplies).toBe(0);
      expect(r.failures).toEqual([]);
      expect(r.ok).toBe(true);
    });
  }
});
