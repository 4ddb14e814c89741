/**
 * The largest cluster shape this project has run (npm run bench:scale, docs/measurements.md "How the cost grows
 * with the cluster"), with what it measured there: the config warns at preview when a stack asks for more.
 */
export const MEASURED_SCALE = {
  primaries: 100,
  replicasPerPrimary: 1,
  nodes: 200,
  /** When and how: the ladder's run the figures come from. */
  run: "2026-11-30, medians of two runs on real processes, 2 cores, cluster-node-timeout 15000 ms",
  bootstrapSeconds: 19.7,
  verifySeconds: 0.1,
  /** Every shard of 10 primaries killed at once writable again. */
  failoverOfTenSeconds: 24,
  /**
   * The largest heal after a full restart on new addresses measured (2026-12-04, the addresses left dropped as a
   * deleted pod's IP answers nothing; docs/measurements.md "Where the heal of 200 members spends its time").
   */
  healMeasuredPrimaries: 100,
  /**
   * There, until the verifier passed: the median of the five heal-step runs since the harness stopped measuring
   * itself (125.8–224.0 s; the current heal.sh's 126.2 s): 200 members' servers and background loops on one 2-core
   * host, bounded by Valkey's FAIL undo (on EKS each member's on its own node). 12.8 s at 30 primaries.
   */
  healSeconds: 127,
  /**
   * P → 2P → P with data and a writer, measured only up to this many primaries: at 100 the 400 processes' bus
   * exhausted this machine's TCP memory (docs/measurements.md).
   */
  reshardMeasuredPrimaries: 30,
  scaleOutSeconds: 20.4,
  /** 2026-12-01, the scale-in with its resets concurrent and the leaving shards held in place (22.5 s before). */
  scaleInSeconds: 10.6,
} as const;

/** The preview's words for a cluster of `primaries` × (1 + `replicas`) beyond MEASURED_SCALE, or undefined. */
export function beyondMeasuredScale(primaries: number, replicas: number): string | undefined {
  const nodes = primaries * (1 + replicas);
  const m = MEASURED_SCALE;
  if (primaries <= m.primaries && nodes <= m.nodes) return undefined;
  return (
    `${primaries} primaries × (1 + ${replicas}) = ${nodes} nodes is beyond the largest shape measured ` +
    `(${m.primaries} × (1 + ${m.replicasPerPrimary}), ${m.run}: bootstrap ${m.bootstrapSeconds} s, verify ` +
    `${m.verifySeconds} s, 10 primaries killed at once writable again after ${m.failoverOfTenSeconds} s; the heal ` +
    `after a full restart ${m.healSeconds} s at ${m.healMeasuredPrimaries} primaries, every member on one host; ` +
    `P → 2P → P with data only up to ${m.reshardMeasuredPrimaries}, ${m.scaleOutSeconds} s out and ` +
    `${m.scaleInSeconds} s back there); ` +
    `measure it first: npm run bench:scale -- --primaries ${primaries} --replicas-per-primary ${replicas}`
  );
}
