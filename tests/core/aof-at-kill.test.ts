/**
 * The crash drills' second reading of their loss (core/drill/aof-at-kill.ts) against a REAL
 * valkey-server: INFO persistence parsed (and refused, naming the field, where the server keeps no
 * AOF), and one SET's AOF bytes as computed equal to what the server really appended to its AOF
 * (`aof_current_size` before and after), so held bytes over that size counts held writes.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aofAtKill, aofSetBytes, parseAofInfo, readAofInfo } from "../../core/drill/aof-at-kill.js";
import type { WriteRecord } from "../../core/drill/ledger.js";
import { freePort } from "../../harness/local/ports.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";

const HOST = "127.0.0.1";
const PASSWORD = "aof-at-kill-password";

describe("the AOF reading of a crash drill, on a real server", () => {
  const fleet = new LocalFleet();
  let aof: ValkeyProcess;
  let plain: ValkeyProcess;
  beforeAll(async () => {
    aof = await fleet.start({
      name: "aof",
      bind: HOST,
      port: await freePort(HOST),
      password: PASSWORD,
      appendonly: true,
    });
    plain = await fleet.start({
      name: "plain",
      bind: HOST,
      port: await freePort(HOST),
      password: PASSWORD,
      appendonly: false,
      save: "",
    });
  }, 60_000);
  afterAll(() => fleet.stopAll());

  it("reads aof_buffer_length and aof_delayed_fsync; refuses a server without an AOF, naming the field", async () => {
    const read = await readAofInfo(HOST, aof.port, PASSWORD);
    expect(Number.isInteger(read.bufferBytes) && read.bufferBytes >= 0).toBe(true);
    expect(Number.isInteger(read.delayedFsync) && read.delayedFsync >= 0).toBe(true);
    await expect(readAofInfo(HOST, plain.port, PASSWORD)).rejects.toThrow(
      /no aof_buffer_length \(is appendonly on\?\)/,
    );
    expect(() => parseAofInfo("aof_buffer_length:12\r\n")).toThrow(/no aof_delayed_fsync/);
  });

  it("one SET's AOF bytes as computed are the bytes the server appends for it", async () => {
    const c = new Redis({ host: HOST, port: aof.port, password: PASSWORD });
    try {
      await c.set("first", "x"); // the server's SELECT goes with the first write
      const size = async (): Promise<number> =>
        Number(/^aof_current_size:(\d+)\r?$/m.exec(String(await c.info("persistence")))?.[1]);
      const before = await size();
      const records: WriteRecord[] = [];
      for (let i = 0; i < 200; i++) {
        const key = `k:${i}:${"é".repeat(i % 7)}`;
        const value = "v".repeat(1 + ((i * 37) % 300));
        await c.set(key, value);
        records.push({ stream: "s", key, value, sentAt: 0, doneAt: 0, ok: true, waited: false });
      }
      const appended = (await size()) - before;
      expect(appended).toBe(records.reduce((sum, r) => sum + aofSetBytes(r.key, r.value), 0));
      // The estimate: held bytes over the average acknowledged SET.
      expect(aofAtKill({ bufferBytes: appended, delayedFsync: 0 }, records).heldWritesEstimate).toBe(200);
      expect(aofAtKill({ bufferBytes: 0, delayedFsync: 0 }, []).heldWritesEstimate).toBeNull();
    } finally {
      c.disconnect();
    }
  });
});
