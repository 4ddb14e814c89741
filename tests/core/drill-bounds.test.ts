/** The promised acknowledged-loss bound per fault (bounds.ts) and what `ok` requires of it (ledger.ts). Pure. */
import { describe, expect, it } from "vitest";
import {
  ackedLossBound,
  durabilityFromConfig,
  firstFailureAfterMs,
  formatBound,
  inWindow,
  partitionWindow,
  type DurabilityConfig,
} from "../../core/drill/bounds.js";
import { drillOk, loadFigures, type WriteRecord } from "../../core/drill/ledger.js";
import { FAULTS } from "../../vocabulary/faults.js";

const FENCED: DurabilityConfig = {
  minReplicasToWrite: 1,
  minReplicasMaxLag: 3,
  appendonly: true,
  appendfsync: "everysec",
};
const UNFENCED: DurabilityConfig = { ...FENCED, minReplicasToWrite: 0, minReplicasMaxLag: 10 };

/** One acknowledged write every 10 ms from t=-10 s to +10 s around a fault at 100 000. */
const FAULT_AT = 100_000;
function records(): WriteRecord[] {
  return Array.from({ length: 2000 }, (_, i) => {
    const doneAt = FAULT_AT - 10_000 + i * 10;
    return { stream: "s", key: `k${i}`, value: `v${i}`, sentAt: doneAt - 1, doneAt, ok: true, waited: false };
  });
}
/** Every key read back, except those `lose` selects (missing) and those `unknown` selects (not read). */
function readBack(
  rs: WriteRecord[],
  lose: (t: number) => boolean,
  unknown: (t: number) => boolean = () => false,
): Map<string, string | undefined> {
  const m = new Map<string, string | undefined>();
  for (const r of rs) {
    const t = r.doneAt - FAULT_AT;
    if (unknown(t)) continue;
    m.set(r.key, lose(t) ? undefined : r.value);
  }
  return m;
}
const NOTHING = (): boolean => false;
const figures = (
  rs: WriteRecord[],
  rb: Map<string, string | undefined>,
  fault: (typeof FAULTS)[number],
  c = FENCED,
  injectMs = 5,
) =>
  loadFigures(["s"], {
    records: rs,
    readBack: rb,
    faultAt: FAULT_AT,
    loadStart: FAULT_AT - 10_000,
    loadStop: FAULT_AT + 10_000,
    bound: ackedLossBound(fault, injectMs, c),
  });

describe("acknowledged-loss bounds per fault", () => {
  it("every fault has a bound from the config, with a reason", () => {
    for (const f of FAULTS) {
      const b = ackedLossBound(f, 5, FENCED);
      expect(b.reason, f).not.toBe("");
      expect(b.toMs, f).toBeGreaterThanOrEqual(0);
    }
  });

  it("kill faults: the async replication window before the fault, from min-replicas-max-lag (+2 s); nothing after the kill", () => {
    expect(ackedLossBound("primary", 7, FENCED)).toMatchObject({ fromMs: -5000, toMs: 7 });
    expect(ackedLossBound("zone", 0, { ...FENCED, minReplicasMaxLag: 5 })).toMatchObject({ fromMs: -7000, toMs: 0 });
    expect(ackedLossBound("primary", 0, UNFENCED).reason).toMatch(/NOT enforced/);
    expect(ackedLossBound("replica", 9, FENCED)).toMatchObject({ fromMs: 0, toMs: 0 });
  });

  it("crash-restart: the AOF write window (2 s with everysec: the buffer held while a background fsync runs); freeze: + max-lag + 2 s after the fault when fenced, nothing after it unfenced", () => {
    expect(ackedLossBound("crash-restart", 0, FENCED)).toMatchObject({ fromMs: -2000, toMs: 0 });
    expect(ackedLossBound("crash-restart", 0, { ...FENCED, appendfsync: "always" })).toMatchObject({
      fromMs: -0,
      toMs: 0,
    });
    expect(ackedLossBound("crash-restart", 0, { ...FENCED, appendonly: false }).fromMs).toBeNull();
    expect(ackedLossBound("freeze", 2, FENCED)).toMatchObject({ fromMs: -5000, toMs: 5002 });
    expect(ackedLossBound("partition", 2, UNFENCED)).toMatchObject({ fromMs: -1000, toMs: 2 });
    expect(ackedLossBound("partition", 2, UNFENCED).reason).toMatch(/unfenced/);
  });

  it("partition: fenced max-lag + 2 s after the cut (whole-second lag clock, 1 Hz refresh); cluster: 1.5 × node-timeout + 200 ms minority rule, the earlier of the two", () => {
    expect(ackedLossBound("partition", 2, FENCED)).toMatchObject({ fromMs: -5000, toMs: 5002 });
    expect(ackedLossBound("partition", 2, FENCED).reason).toMatch(/min-replicas-max-lag 3 s \+ 2 s/);
    const cluster = { ...UNFENCED, clusterNodeTimeoutMs: 2000 };
    expect(ackedLossBound("partition", 2, cluster)).toMatchObject({ fromMs: -1000, toMs: 3202 });
    expect(ackedLossBound("partition", 2, cluster).reason).toMatch(/cluster minority.*no min-replicas fencing/);
    // Both: whichever refuses writes first.
    expect(ackedLossBound("partition", 0, { ...FENCED, clusterNodeTimeoutMs: 2000 }).toMs).toBe(3200);
    expect(ackedLossBound("partition", 0, { ...FENCED, clusterNodeTimeoutMs: 15_000 }).toMs).toBe(5000);
    // freeze keeps its own window (a frozen primary runs no cron).
    expect(ackedLossBound("freeze", 2, { ...UNFENCED, clusterNodeTimeoutMs: 2000 })).toMatchObject({ toMs: 2 });
  });

  it("the bound in writes is the acknowledged writes in the window; loss inside passes, loss after the fault fails", () => {
    const rs = records();
    const inside = figures(
      rs,
      readBack(rs, (t) => t > -300 && t <= 0),
      "primary",
    );
    expect(inside.ackedLossBound).toMatchObject({ fromMs: -5000, toMs: 5, writes: 501 });
    expect(inside.lostAckedWrites).toBe(30);
    expect(inside.lostAckedOutsideBound).toBe(0);
    expect(drillOk(true, inside)).toBe(true);
    // The frozen/restarted old primary's writes after the fault: outside the kill bound.
    const lateLoss = readBack(rs, (t) => t > 2000 && t < 2100);
    const after = figures(rs, lateLoss, "primary");
    expect(after.lostAckedOutsideBound).toBe(9);
    expect(drillOk(true, after)).toBe(false);
    // The same writes are inside a fenced freeze's window, outside an unfenced one's.
    expect(drillOk(true, figures(rs, lateLoss, "freeze"))).toBe(true);
    expect(drillOk(true, figures(rs, lateLoss, "freeze", UNFENCED))).toBe(false);
    expect(formatBound(inside.ackedLossBound!)).toBe("≤501 (−5.0…+0.0 s)");
  });

  it("a key that could not be read is unknown, not lost, and ok needs none unknown and a checked bound", () => {
    const rs = records();
    const f = figures(
      rs,
      readBack(rs, NOTHING, (t) => t > 1000),
      "primary",
    );
    expect(f.unknownWrites).toBe(899);
    expect(f.lostAckedWrites).toBe(0);
    expect(drillOk(true, f)).toBe(false);
    const clean = figures(rs, readBack(rs, NOTHING), "primary");
    expect(drillOk(true, clean)).toBe(true);
    expect(drillOk(false, clean)).toBe(false);
    expect(drillOk(true, { ...clean, ackedLossBound: null })).toBe(false);
  });

  it("CONFIG GET pairs → settings; a missing one names itself", () => {
    expect(
      durabilityFromConfig([
        "min-replicas-to-write",
        "1",
        "min-replicas-max-lag",
        "3",
        "appendonly",
        "yes",
        "appendfsync",
        "everysec",
      ]),
    ).toEqual(FENCED);
    expect(() => durabilityFromConfig(["appendfsync", "everysec", "appendonly", "yes"])).toThrow(
      /min-replicas-to-write/,
    );
    // A reply cut short after a name: that name has no value (not the text "undefined").
    expect(() => durabilityFromConfig(["appendfsync", "everysec", "min-replicas-to-write"])).toThrow(
      "CONFIG GET min-replicas-to-write: no numeric value (got undefined)",
    );
    const pairs = [
      "min-replicas-to-write",
      "0",
      "min-replicas-max-lag",
      "10",
      "appendonly",
      "yes",
      "appendfsync",
      "everysec",
    ];
    expect(durabilityFromConfig([...pairs, "cluster-enabled", "yes", "cluster-node-timeout", "2000"])).toEqual({
      ...UNFENCED,
      clusterNodeTimeoutMs: 2000,
    });
    expect(
      durabilityFromConfig([...pairs, "cluster-enabled", "no", "cluster-node-timeout", "15000"]),
    ).not.toHaveProperty("clusterNodeTimeoutMs");
  });

  it("the edges: fencing wins a tie with the minority rule; a window holds both its ends; the first failure at or after the fault", () => {
    // Fence 3 s + 2 s = 5,000 ms; minority 1.5 × 3,200 + 200 = 5,000 ms: a tie names the fence.
    expect(partitionWindow({ ...FENCED, clusterNodeTimeoutMs: 3200 })).toMatchObject({
      ms: 5000,
      why: expect.stringMatching(/^fenced/) as string,
    });
    const w = { fromMs: -1000, toMs: 500, reason: "" };
    expect([-1001, -1000, 0, 500, 501].map((t) => inWindow(w, 10_000 + t, 10_000))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
    expect(inWindow({ fromMs: null, toMs: 0, reason: "" }, -1e9, 0)).toBe(true);
    const records = [
      { doneAt: 990, ok: false },
      { doneAt: 1000, ok: true },
      { doneAt: 1300, ok: false },
      { doneAt: 1000, ok: false },
      { doneAt: 1200, ok: false },
    ];
    expect(firstFailureAfterMs(records, 1000)).toBe(0);
    expect(firstFailureAfterMs(records.slice(0, 3), 1000)).toBe(300);
    expect(firstFailureAfterMs([{ doneAt: 5, ok: true }], 0)).toBeNull();
  });

  it("formatBound signs the window's start; CONFIG GET with an odd tail or an unknown appendfsync is refused by name", () => {
    expect(formatBound({ writes: 7, fromMs: -5000, toMs: 0, reason: "" })).toBe("≤7 (−5.0…+0.0 s)");
    expect(formatBound({ writes: 7, fromMs: 0, toMs: 2, reason: "" })).toBe("≤7 (+0.0…+0.0 s)");
    const pairs = [
      "min-replicas-to-write",
      "1",
      "min-replicas-max-lag",
      "3",
      "appendonly",
      "yes",
      "appendfsync",
      "everysec",
    ];
    // A trailing name without its value is ignored (it is not the value of anything).
    expect(durabilityFromConfig([...pairs, "cluster-enabled"])).toEqual(FENCED);
    for (const fsync of ["always", "everysec", "no"])
      expect(durabilityFromConfig([...pairs.slice(0, 7), fsync]).appendfsync).toBe(fsync);
    expect(() => durabilityFromConfig([...pairs.slice(0, 7), "sometimes"])).toThrow(
      'CONFIG GET appendfsync: unexpected "sometimes"',
    );
  });
});
