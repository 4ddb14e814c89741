/**
 * thawLoss (tests/pods/support/drill-checks.ts): the pods tier accepts a freeze row's `ok: false` only as the loss an
 * unfenced freeze is known to cause, writes the thawed primary acknowledged. The base row is the cluster freeze row of a
 * real-pod run (2026-11-27, byo-stack.test.ts: 2 writes acknowledged at +10.041 s, the thaw at +10 s), trimmed.
 */
import { describe, expect, it } from "vitest";
import { thawLoss, type DrillRow } from "../pods/support/drill-checks.js";

const HOLD_MS = 10_000;
const failure =
  "2 lost acknowledged writes (no-WAIT writer) outside the bound (acknowledged +10.04…+10.04 s after the fault, by valkey-cluster-3.valkey-cluster-headless.valkey-scale-pods.svc.cluster.local:6379)";
const row = (o: Partial<DrillRow> = {}): DrillRow => ({
  mode: "cluster",
  fault: "freeze",
  ok: false,
  healed: true,
  faultDescription:
    "primary valkey-cluster-0 (10.232.0.22 on vk8s-us-west-2b): valkey-server stopped (SIGSTOP) for 10 s",
  recoveryMs: 31139,
  detectionMs: 5229,
  writeOutageMs: 9153,
  ackedWrites: 1322,
  lostAckedWrites: 2,
  waitedWrites: 1220,
  lostWaitedWrites: 0,
  after: { ok: true, failures: [] },
  faultAt: "2026-11-27T12:00:00.000Z", // not kept by that run (the field came later); thawLoss does not read it
  loadPod: "valkey-drill-freeze-5ebfda-rm67n",
  deletedPods: [],
  failures: [failure],
  durability: { minReplicasToWrite: 0 },
  streams: [
    { stream: "cluster-client@0-5460", lostAckedWrites: 2, lostOutside: { fromMs: 10041, toMs: 10042 } },
    { stream: "cluster-client@5461-10921", lostAckedWrites: 0, lostOutside: null },
  ],
  ...o,
});
const at = (fromMs: number, toMs: number): Partial<DrillRow> => ({
  streams: [{ stream: "cluster-client@0-5460", lostAckedWrites: 2, lostOutside: { fromMs, toMs } }],
});

describe("thawLoss: the unfenced freeze's known loss, and nothing else", () => {
  it("names the real row's loss: acknowledged 41 ms after the thaw, the row's only failure", () => {
    expect(thawLoss(row(), HOLD_MS)).toBe(
      `2 write(s) acknowledged by the thawed unfenced primary and lost (cluster-client@0-5460 +10041…+10042 ms, the thaw at +10000 ms): ${failure}`,
    );
  });

  it.each([
    ["an ok row", { ok: true }],
    ["a partition", { fault: "partition" }],
    ["a fenced primary (min-replicas-to-write 1)", { durability: { minReplicasToWrite: 1 } }],
    ["a row without its durability", { durability: undefined }],
    ["a WAIT-confirmed write lost", { lostWaitedWrites: 1 }],
    ["another failure beside it", { failures: [failure, "healed: false"] }],
    ["no failure named", { failures: [] }],
    ["a loss while frozen (+5 s)", at(5000, 5001)],
    ["a loss 250 ms before the thaw", at(HOLD_MS - 251, HOLD_MS + 10)],
    ["a loss after the thaw window", at(HOLD_MS + 100, HOLD_MS + 5001)],
    ["no stream's span", { streams: [] }],
  ] as const)("not %s", (_what, o) => {
    expect(thawLoss(row(o as Partial<DrillRow>), HOLD_MS)).toBeUndefined();
  });
});
