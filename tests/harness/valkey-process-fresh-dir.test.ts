import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import type * as Ports from "../../harness/local/ports.js";

// The ports the kernel hands out, scripted: the first free port asked for after a member stopped can be
// that member's own (the kernel picks at random; the CI of 53c3dbd drew one).
const scripted: number[] = [];
vi.mock("../../harness/local/ports.js", async (importActual) => {
  const actual = await importActual<typeof Ports>();
  const freePort = async (host?: string): Promise<number> => scripted.shift() ?? actual.freePort(host);
  return {
    ...actual,
    freePort,
    freePortForFreshDir: (root: string, name: string, host?: string) =>
      actual.freePortForFreshDir(root, name, host, freePort),
  };
});

describe("a member started without a port", () => {
  const fleet = new LocalFleet();
  afterAll(() => fleet.stopAll());

  it("never lands in a stopped member's directory when the kernel hands its port out again", async () => {
    const first = await fleet.start({ name: "member" });
    await first.stop();
    expect(existsSync(join(first.dir, "valkey.conf"))).toBe(true);
    scripted.push(first.port);
    const second = await fleet.start({ name: "member" });
    expect(second.port).not.toBe(first.port);
    expect(second.dir).not.toBe(first.dir);
    await second.stop();
  }, 30_000);
});
