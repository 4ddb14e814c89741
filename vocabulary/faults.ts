/**
 * The drill vocabulary every layer shares: the fault names, the two drill modes, the parser of a
 * fault list, and the faults the deployed FailureDrill step cannot inject (config refuses them).
 * Plain values; imports nothing.
 */
export const FAULTS = [
  "primary",
  "replica",
  "zone",
  "all",
  "switchover",
  "crash-restart",
  "freeze",
  "partition",
  "lost-volume",
  "upgrade",
] as const;
export type Fault = (typeof FAULTS)[number];
export type DrillMode = "cluster" | "replication";

/**
 * Faults the deployed step cannot inject, and why (config/drills-section.ts refuses them, naming drills.faults;
 * components/steps/failure-drill/faults.ts injects the rest).
 */
export const UNSUPPORTED_DEPLOYED_FAULTS: Partial<Record<Fault, string>> = {
  upgrade:
    "a deployed upgrade is a real change: set a new valkey.image (or a restart-only setting) and `pulumi up`; the RollingRestart step rolls the members in the same order the local drill does (docs/drills.md, upgrade); run the drill with `vbench drill --fault upgrade` locally",
};

/** Deployed freeze and partition hold the fault this long past failure detection (and the failover). */
export const HELD_PAST_DETECTION_S = 5;
/**
 * Deployed freeze and partition: seconds the fault holds, failure detection (down-after / cluster-node-timeout) +
 * HELD_PAST_DETECTION_S.
 */
export const heldFaultS = (failureDetectionMs: number): number =>
  Math.ceil(failureDetectionMs / 1000) + HELD_PAST_DETECTION_S;

/** Parses `primary,zone` (or `all-faults`-free lists), naming an unknown fault. */
export function parseFaults(text: string): Fault[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (names.length === 0) throw new Error(`no fault named (known: ${FAULTS.join(", ")})`);
  const bad = names.filter((n) => !(FAULTS as readonly string[]).includes(n));
  if (bad.length > 0) throw new Error(`unknown fault(s) ${bad.join(", ")} (known: ${FAULTS.join(", ")})`);
  return [...new Set(names)] as Fault[];
}
