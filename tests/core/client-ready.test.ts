/**
 * clientReady (core/util/client-ready.ts) on a plain EventEmitter standing for an ioredis client's
 * status and events (the events are the whole interface it reads): many waiters share one
 * listener pair, each keeps its own deadline, and an end rejects them all naming the caller.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { clientReady } from "../../core/util/client-ready.js";

class Client extends EventEmitter {
  status = "connecting";
}

describe("clientReady", () => {
  it("twenty waiters on one connecting client: one ready and one end listener, all resolved by one ready, none left after", async () => {
    const c = new Client();
    const waits = Array.from({ length: 20 }, (_, i) => clientReady(c, `write ${i}`, 5000));
    expect([c.listenerCount("ready"), c.listenerCount("end")]).toEqual([1, 1]);
    c.status = "ready";
    c.emit("ready");
    await Promise.all(waits);
    expect([c.listenerCount("ready"), c.listenerCount("end")]).toEqual([0, 0]);
  });

  it("each waiter keeps its own deadline; a later waiter still resolves at the ready", async () => {
    const c = new Client();
    const early = clientReady(c, "early", 20);
    const late = clientReady(c, "late", 5000);
    await expect(early).rejects.toThrow("early: not ready within 20 ms");
    c.status = "ready";
    c.emit("ready");
    await expect(late).resolves.toBeUndefined();
  });

  it("an end before ready rejects every waiter naming it, and a new wait listens afresh", async () => {
    const c = new Client();
    const a = clientReady(c, "writer a", 5000);
    const b = clientReady(c, "writer b", 5000);
    c.emit("end");
    await expect(a).rejects.toThrow("writer a: the connection closed before it was ready");
    await expect(b).rejects.toThrow("writer b: the connection closed before it was ready");
    expect([c.listenerCount("ready"), c.listenerCount("end")]).toEqual([0, 0]);
    const again = clientReady(c, "again", 5000);
    expect(c.listenerCount("ready")).toBe(1);
    c.status = "ready";
    c.emit("ready");
    await expect(again).resolves.toBeUndefined();
  });

  it("a ready client resolves at once without a listener", async () => {
    const c = new Client();
    c.status = "ready";
    await expect(clientReady(c, "x", 10)).resolves.toBeUndefined();
    expect(c.listenerCount("ready")).toBe(0);
  });
});
