/**
 * The partition fault's mechanism (harness/drill/partition.ts) on the real iptables (root):
 * a cut drops TCP between the two named processes only (a client on 127.0.0.1 still connects, and
 * so does the peer to another process on the same address: concurrent topologies share them),
 * the heal removes the chain, a chain left by a dead process is removed by the next cut, and a
 * SIGTERMed `vbench drill --fault partition` leaves no rule behind. Without root or a working
 * iptables the drill is skipped with the reason (exit 3), never passed.
 */
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  blackholeRules,
  chainName,
  dropRules,
  Partition,
  partitionCapability,
  restoreInput,
  vbenchChains,
  type CapabilityProbe,
} from "../../harness/drill/partition.js";
import { isSkipped } from "../../core/drill/drill-result.js";
import { runDrill } from "../../harness/drill/run-drill.js";
import { namedClientIds } from "../../harness/drill/split-counter.js";
import { liveServerCount } from "../../harness/local/valkey-process.js";
import { processesLeftWithMarker, runVbench } from "../support/processes.js";
import { connects, dialOutcome } from "../support/tcp-probe.js";
import { testOptions } from "./drill-faults.js";
import { rootSkipReason, titled } from "../support/root.js";

const NOT_ROOT = rootSkipReason("iptables rules on loopback");

const cap = partitionCapability();
/** The real iptables: these tests need root and iptables (.ci/setup installs it when run as root). */
function iptables(): string {
  if (!cap.ok) throw new Error(`the partition tests need root and a working iptables: ${cap.reason}`);
  return cap.iptables;
}

describe.skipIf(NOT_ROOT !== "")(titled("partition rules (real iptables)", NOT_ROOT), () => {
  const isolated = "127.0.0.231";
  const servers: Server[] = [];
  let port = 0;
  let otherPort = 0;
  const listen = async (): Promise<number> => {
    const server = createServer((c) => c.end());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, isolated, resolve));
    return (server.address() as { port: number }).port;
  };
  beforeAll(async () => {
    port = await listen();
    otherPort = await listen();
  });
  afterAll(() => servers.forEach((s) => s.close()));
  const peer = { host: "127.0.0.232", ports: [1] };

  it("DROP rules: both directions of connections to either side's listening ports, per peer", () => {
    const tcp = ["-p", "tcp", "-m", "multiport"];
    expect(
      dropRules("VBENCH-1", { host: "10.0.0.1", ports: [6379, 16379] }, [{ host: "10.0.0.2", ports: [26379] }]),
    ).toEqual([
      ["-A", "VBENCH-1", "-s", "10.0.0.2", "-d", "10.0.0.1", ...tcp, "--dports", "6379,16379", "-j", "DROP"],
      ["-A", "VBENCH-1", "-s", "10.0.0.1", "-d", "10.0.0.2", ...tcp, "--sports", "6379,16379", "-j", "DROP"],
      ["-A", "VBENCH-1", "-s", "10.0.0.1", "-d", "10.0.0.2", ...tcp, "--dports", "26379", "-j", "DROP"],
      ["-A", "VBENCH-1", "-s", "10.0.0.2", "-d", "10.0.0.1", ...tcp, "--sports", "26379", "-j", "DROP"],
    ]);
    expect(() => dropRules("VBENCH-1", { host: "10.0.0.1", ports: [1] }, [])).toThrow(/no peer/);
    // One iptables-restore transaction: the chain, its rules, then the jump that starts the cut.
    expect(restoreInput("VBENCH-1", [["-A", "VBENCH-1", "-j", "DROP"]])).toBe(
      "*filter\n:VBENCH-1 - [0:0]\n-A VBENCH-1 -j DROP\n-I INPUT 1 -j VBENCH-1\nCOMMIT\n",
    );
    expect(() => dropRules("VBENCH-1", { host: "10.0.0.1", ports: [] }, [peer])).toThrow(
      /10.0.0.1 needs 1 to 15 listening ports/,
    );
  });

  it("cut: the peer's packets are dropped, a client on 127.0.0.1 still connects; heal: the chain is gone and the peer connects again", async () => {
    const bin = iptables();
    expect(await connects("127.0.0.232", isolated, port)).toBe(true);
    const p = await Partition.cut(bin, { host: isolated, ports: [port] }, [peer]);
    try {
      expect(vbenchChains(bin)).toContain(chainName());
      expect(await connects("127.0.0.232", isolated, port)).toBe(false);
      expect(await connects("127.0.0.233", isolated, port)).toBe(true);
      expect(await connects("127.0.0.1", isolated, port)).toBe(true);
      expect(await connects("127.0.0.232", isolated, otherPort)).toBe(true);
    } finally {
      await p.lift();
    }
    expect(p.active).toBe(false);
    expect(vbenchChains(bin)).not.toContain(chainName());
    expect(execFileSync(bin, ["-w", "5", "-S", "INPUT"], { encoding: "utf8" })).not.toContain("VBENCH-");
    expect(await connects("127.0.0.232", isolated, port)).toBe(true);
    expect(p.heal()).toBe(true); // idempotent
  });

  it("blackhole: a connect to a dropped address hangs instead of being refused, until lifted; other addresses still refuse", async () => {
    const bin = iptables();
    expect(blackholeRules("VBENCH-1", ["10.0.0.1", "10.0.0.2"])).toEqual([
      ["-A", "VBENCH-1", "-d", "10.0.0.1", "-j", "DROP"],
      ["-A", "VBENCH-1", "-d", "10.0.0.2", "-j", "DROP"],
    ]);
    expect(() => blackholeRules("VBENCH-1", [])).toThrow(/no address/);
    // Nothing listens on these: loopback refuses at once.
    const [gone, other] = ["127.0.0.234", "127.0.0.235"];
    expect(await dialOutcome("127.0.0.1", gone, port)).toBe("refused");
    const p = await Partition.blackhole(bin, [gone]);
    try {
      expect(p.describe()).toMatch(/^1 addresses blackholed \(1 DROP rules in iptables chain VBENCH-\d+\)$/);
      expect(await dialOutcome("127.0.0.1", gone, port)).toBe("no answer");
      expect(await dialOutcome("127.0.0.1", other, port)).toBe("refused");
    } finally {
      await p.lift();
    }
    expect(p.active).toBe(false);
    expect(await dialOutcome("127.0.0.1", gone, port)).toBe("refused");
  });

  it("a chain left by a process that no longer runs is removed by the next cut", async () => {
    const bin = iptables();
    const dead = "VBENCH-4194303"; // above any pid this machine hands out
    execFileSync(bin, ["-w", "5", "-N", dead]);
    const p = await Partition.cut(bin, { host: isolated, ports: [port] }, [peer]);
    await p.lift();
    expect(vbenchChains(bin)).not.toContain(dead);
  });
});

describe("the write endpoint's split (CLIENT LIST)", () => {
  it("counts connections by name and peer address, not HAProxy's checks nor the Sentinel-aware client", () => {
    const list = [
      "id=7 addr=127.0.0.120:40100 laddr=127.0.0.20:6379 fd=9 name=drill-write-endpoint age=0 cmd=set",
      "id=8 addr=127.0.0.120:40102 laddr=127.0.0.20:6379 fd=10 name= age=0 cmd=info",
      "id=9 addr=127.0.0.1:40104 laddr=127.0.0.20:6379 fd=11 name=drill-write-endpoint age=0 cmd=set",
      "id=10 addr=127.0.0.12:40106 laddr=127.0.0.20:6379 fd=12 name=drill-write-endpoint age=0 cmd=set",
      "id=11 addr=127.0.0.120:40108 laddr=127.0.0.20:6379 fd=13 name=drill-write-endpoint age=3 cmd=wait",
      "",
    ].join("\r\n");
    expect(namedClientIds(list, "drill-write-endpoint", "127.0.0.120")).toEqual(["7", "11"]);
  });
});

describe("partition capability: skipped with the reason, never passed", () => {
  it("not root, iptables missing, iptables unusable: each named", () => {
    const reason = (probe: CapabilityProbe): string => {
      const c = partitionCapability(probe);
      return c.ok ? "ok" : c.reason;
    };
    expect(reason({ uid: 1000 })).toMatch(/^not root \(uid 1000\)/);
    expect(reason({ uid: 0, env: { PATH: "/nonexistent" } })).toMatch(/^iptables not found on PATH/);
    expect(reason({ uid: 0, env: { IPTABLES: "/nonexistent/iptables" } })).toMatch(
      /IPTABLES names \/nonexistent\/iptables, which does not exist/,
    );
    expect(reason({ uid: 0, env: { IPTABLES: "/bin/false" } })).toMatch(/^iptables is not usable here/);
  });

  it("runDrill as a non-root user: a SkippedDrill (ok false, the reason), nothing started", async () => {
    const r = await runDrill({ ...testOptions("replication", "partition"), capabilityProbe: { uid: 1000 } });
    expect(isSkipped(r) && r).toMatchObject({ mode: "replication", fault: "partition", ok: false });
    expect(isSkipped(r) ? r.skipped.reason : "ran").toMatch(/^not root/);
    expect(liveServerCount()).toBe(0);
  });

  it("vbench drill with IPTABLES naming a missing binary: exit 3, { ok: false, skipped: { reason } }", async () => {
    const run = await runVbench(
      ["drill", "--mode", "cluster", "--fault", "partition", "--json"],
      "VBENCH_PARTITION_MARKER",
      undefined,
      {
        env: { IPTABLES: "/nonexistent/iptables" },
      },
    );
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout) as { mode: string; fault: string; ok: boolean; skipped: { reason: string } };
    expect(out).toMatchObject({ mode: "cluster", fault: "partition", ok: false });
    // As a non-root user the first reason is that one (the probe checks the user first).
    expect(out.skipped.reason).toMatch(NOT_ROOT === "" ? /IPTABLES names/ : /^not root/);
    expect(await processesLeftWithMarker(run.marker)).toEqual([]);
  }, 60_000);
});

describe.skipIf(NOT_ROOT !== "")(
  titled("vbench drill --fault partition, SIGTERM while the primary is cut off (real processes)", NOT_ROOT),
  () => {
    it("exits 143 and leaves no rule and no process behind", async () => {
      const bin = iptables();
      const run = await runVbench(
        [
          "drill",
          "--mode",
          "replication",
          "--fault",
          "partition",
          "--duration-s",
          "1",
          "--warmup-s",
          "2",
          "--rate",
          "50",
          "--partition-ms",
          "60000",
        ],
        "VBENCH_PARTITION_MARKER",
        /fault: partition/,
        { signal: "SIGTERM" },
      );
      expect(run.code, run.stderr).toBe(143);
      const chain = /iptables chain (VBENCH-\d+)/.exec(run.stderr)?.[1];
      expect(chain, run.stderr).toBeDefined();
      expect(vbenchChains(bin)).not.toContain(chain);
      expect(await processesLeftWithMarker(run.marker)).toEqual([]);
    }, 120_000);
  },
);
