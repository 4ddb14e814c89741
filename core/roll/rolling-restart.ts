/**
 * Drives a rolling restart in the order roll-plan.ts decides, one step at a time, each step only
 * once the verifier passes again (roll-plan.ts gateOpen), and times every step. What a restart or
 * a failover IS comes from the caller (RollOps): the local targets stop and start processes
 * through the pods' own preStop and start scripts; the deployed step deletes pods. The same
 * order and the same gates either way.
 */
import { sleep } from "../util/poll-until.js";
import type { TopologyReport } from "../verify/verify-types.js";
import { describeStep, gateOpen, nextRollStep, type RollStep } from "./roll-plan.js";

export type RestartStep = Exclude<RollStep, { kind: "failover" }>;

export interface RollOps {
  /** The verifier on the live members (Sentinels and zones included where the topology has them). */
  verify(): Promise<TopologyReport>;
  /**
   * Restarts one member or Sentinel as its pod restarts (preStop, stop, start on the new version); resolves once it
   * runs again.
   */
  restart(step: RestartStep): Promise<void>;
  /** Cluster mode: `CLUSTER FAILOVER` on the replica at `address`. */
  failover(address: string): Promise<void>;
  /**
   * What the clients' endpoints see, asked after the verifier passes: undefined when settled, else
   * why not. Replication mode: every HAProxy counts every Sentinel naming the primary (its
   * `/sentinels` status path), so the next Sentinel restart cannot drop it below a majority while
   * it still resolves a restarted Sentinel's old pod IP. @default always settled
   */
  endpointsSettled?(): Promise<string | undefined>;
}

export interface RollOptions {
  /** Longest wait for the verifier to pass after a step (and for a failover to show). @default 120000 */
  stepTimeoutMs?: number;
  /** @default 250 */
  pollMs?: number;
  /**
   * Which members and Sentinels of this report already run the new version, asked before every
   * step. The deployed step answers from the pods (at the StatefulSet's update revision), so a
   * Sentinel that comes back on a new pod IP, and a roll resumed by a later `up`, are known as
   * rolled. @default the addresses this roll restarted (stable addresses: the local topologies)
   */
  rolledIn?: (report: TopologyReport) => Promise<ReadonlySet<string>>;
  onStep?: (line: string) => void;
}

export interface RollStepTiming {
  /** describeStep's text. */
  step: string;
  kind: RollStep["kind"];
  /** The member, Sentinel or (failover) the promoted replica. */
  address: string;
  /** ms from the roll's start to this step's start. */
  startMs: number;
  /** ms from this step's start until the verifier passed again. */
  ms: number;
}

export interface RollResult {
  steps: RollStepTiming[];
  totalMs: number;
  /** The verifier's report at the end: passes, zones included. */
  final: TopologyReport;
}

const failureText = (r: TopologyReport | { error: string }): string =>
  "error" in r ? r.error : r.failures.map((f) => `${f.code}${f.node === undefined ? "" : ` (${f.node})`}`).join(", ");

/** Polls the verifier until `ready(report)` or the deadline; throws naming `what` and the last failures. */
async function waitFor(
  ops: RollOps,
  what: string,
  ready: (r: TopologyReport) => boolean,
  timeoutMs: number,
  pollMs: number,
): Promise<TopologyReport> {
  const deadline = Date.now() + timeoutMs;
  let last: TopologyReport | { error: string };
  for (;;) {
    try {
      last = await ops.verify();
      if (ready(last)) {
        const unsettled = await ops.endpointsSettled?.();
        if (unsettled === undefined) return last;
        last = { error: `the verifier passes, but ${unsettled}` };
      }
    } catch (e) {
      last = { error: (e as Error).message };
    }
    if (Date.now() >= deadline)
      throw new Error(
        `rolling restart: ${what} not reached within ${timeoutMs} ms (last verifier result: ${failureText(last)})`,
      );
    await sleep(pollMs);
  }
}

const primaryOf = (r: TopologyReport, address: string): boolean => r.shards.some((s) => s.primary.address === address);

/** Every member and Sentinel a report names. */
export const addressesOf = (r: TopologyReport): string[] => [
  ...(r.sentinels ?? []).map((s) => s.address),
  ...r.shards.flatMap((s) => [s.primary.address, ...s.replicas.map((x) => x.address)]),
];

/**
 * Restarts every member (and Sentinel) once, in roll-plan.ts's order; resolves when the verifier passes on all of them.
 */
export async function rollingRestart(ops: RollOps, o: RollOptions = {}): Promise<RollResult> {
  const stepTimeoutMs = o.stepTimeoutMs ?? 120_000;
  const pollMs = o.pollMs ?? 250;
  const steps: RollStepTiming[] = [];
  const started = Date.now();
  const restarted = new Set<string>();
  const rolledIn = o.rolledIn ?? (() => Promise.resolve(restarted));
  let report = await waitFor(ops, "a passing verifier before the roll", gateOpen, stepTimeoutMs, pollMs);
  for (
    let step = nextRollStep(report, await rolledIn(report));
    step !== undefined;
    step = nextRollStep(report, await rolledIn(report))
  ) {
    const text = describeStep(step);
    // Each member is restarted once and each shard fails over about once: far more steps means roles keep moving under
    // the roll.
    if (steps.length > 3 * addressesOf(report).length)
      throw new Error(
        `rolling restart: no end after ${steps.length} steps (last: ${text}); roles keep moving under the roll`,
      );
    const at = Date.now();
    o.onStep?.(text);
    let address: string;
    if (step.kind === "failover") {
      const { to } = step;
      address = to;
      // The AZ failback loop may promote the same replica between our report and this call (the
      // server then refuses: "You should send CLUSTER FAILOVER to a replica"): done either way.
      await ops.failover(to).catch(async (e: unknown) => {
        if (!primaryOf(await ops.verify(), to)) throw e;
      });
      report = await waitFor(
        ops,
        `${text}: ${to} serving as primary`,
        (r) => primaryOf(r, to) && gateOpen(r),
        stepTimeoutMs,
        pollMs,
      );
    } else {
      address = step.address;
      await ops.restart(step);
      restarted.add(step.address);
      report = await waitFor(ops, `${text}: a passing verifier`, gateOpen, stepTimeoutMs, pollMs);
    }
    steps.push({ step: text, kind: step.kind, address, startMs: at - started, ms: Date.now() - at });
  }
  const final = await waitFor(
    ops,
    "a passing verifier (zones included) after the roll",
    (r) => r.ok,
    stepTimeoutMs,
    pollMs,
  );
  return { steps, totalMs: Date.now() - started, final };
}
