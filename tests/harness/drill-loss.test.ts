/**
 * The ledger can see loss: on the real Sentinel topology, the replicas are frozen (SIGSTOP) and a
 * burst of large values fills the replication stream's socket buffers, so the drill's next
 * writes are acknowledged by the primary but sit in its output buffer; then the primary is
 * SIGKILLed and the replicas thawed. A replica without those writes is promoted: acknowledged
 * writes are lost and the drill must count them, while none of them was confirmed by WAIT
 * (WAIT 1 could not reach a frozen replica). The same drill with WAIT disabled (timeout 0)
 * confirms nothing.
 */
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import type { DrillTarget } from "../../core/drill/target.js";
import { sleep } from "../../core/util/poll-until.js";
import { log, testOptions, TIMINGS } from "./drill-faults.js";

const PASSWORD = "drill-loss-password";
let target: ReplicationTarget | undefined;
afterAll(async () => target?.stop());

/** Freeze the replicas and push ~32 MiB through the primary so later writes stay in its output buffer. */
async function freezeAndFill(t: DrillTarget): Promise<void> {
  const topo = (t as ReplicationTarget).t;
  const primary = topo.member(await topo.primaryFromSentinels());
  for (const m of topo.members) if (m !== primary) m.proc?.signal("SIGSTOP");
  const c = new Redis({ host: primary.host, port: primary.port, password: PASSWORD });
  try {
    const big = "x".repeat(1024 * 1024);
    for (let i = 0; i < 32; i++) await c.set(`filler:${i}`, big);
  } finally {
    c.disconnect();
  }
  await sleep(800);
}

function thaw(t: DrillTarget): Promise<void> {
  for (const m of (t as ReplicationTarget).t.members) m.proc?.signal("SIGCONT");
  return Promise.resolve();
}

describe("the lost-write ledger sees asynchronous loss (real Sentinel topology)", () => {
  it("primary killed with unreplicated acknowledged writes: lostAckedWrites > 0, lostWaitedWrites = 0, not hidden", async () => {
    // The killed primary stays down past the failover, so it cannot come back as primary first.
    target = await ReplicationTarget.start({
      ...TIMINGS,
      restartDelayMs: 10_000,
      replicas: 2,
      zones: ["zone-a", "zone-b", "zone-c"],
      password: PASSWORD,
    });
    const r = await drillOn(target, {
      ...testOptions("replication", "primary"),
      restartDelayMs: 10_000,
      beforeFault: freezeAndFill,
      afterFault: thaw,
    });
    log(r);
    expect(r.healed).toBe(true);
    expect(r.waitedWrites).toBeGreaterThan(0);
    expect(
      r.lostAckedWrites,
      "the frozen-replica writes were acknowledged and must be missing after the failover",
    ).toBeGreaterThan(0);
    expect(r.lostWaitedWrites).toBe(0);
    // Frozen replicas are replication lag past what the settings promise: ok follows the bound.
    expect(r.ackedLossBound).not.toBeNull();
    expect(r.ok).toBe(r.lostAckedOutsideBound === 0 && r.unknownWrites === 0);
    for (const s of r.streams) expect(s.lostKeys.length).toBe(Math.min(20, s.lostAckedWrites));
  }, 150_000);
});
