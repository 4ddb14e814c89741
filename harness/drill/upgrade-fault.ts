/**
 * The `upgrade` fault of the local drill targets: the topology was started on an older
 * valkey-server (resolvePreviousServer: the "old image"); every member and Sentinel is rolled to
 * the current one (resolveBinaries: the "new image") in roll-plan.ts's order by
 * rolling-restart.ts, each restart through the pod's own preStop and start script. The fault is
 * over when the roll is, and only once every member and Sentinel reports the new version.
 */
import { resolveBinaries, type ResolvedTool } from "../../benchmarks/run/binaries.js";
import { rollingRestart, type RollOps, type RollStepTiming } from "../../core/roll/rolling-restart.js";
import { requireVersion, serverVersions } from "../../core/roll/server-version.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { FaultHandle } from "../../core/drill/target.js";

export interface UpgradeFault {
  ops: RollOps;
  /** The server the topology started on. */
  from: ResolvedTool;
  /** Makes every later (re)start run `serverPath` (the new image). */
  switchTo(serverPath: string): void;
  /** Every member and Sentinel, for the version check at the end. */
  endpoints(): NodeEndpoint[];
  password: string;
  onStep?: (line: string) => void;
}

export const ROLL_ORDER_SUMMARY =
  "Sentinels one at a time, then per shard the replicas one by one (each back and synced), then the primary's hand-over (cluster: CLUSTER FAILOVER to a restarted synced replica, then its restart; replication: its preStop switchover)";

export function injectUpgrade(u: UpgradeFault): FaultHandle & { rollSteps: () => RollStepTiming[] } {
  const to = resolveBinaries().server;
  u.switchTo(to.path);
  let steps: RollStepTiming[] = [];
  const restored = (async () => {
    const roll = await rollingRestart(u.ops, { onStep: u.onStep });
    steps = roll.steps;
    requireVersion(await serverVersions(u.endpoints(), u.password), to.version, "after the roll");
  })();
  return {
    description: `rolling upgrade valkey-server ${u.from.version} → ${to.version}: ${ROLL_ORDER_SUMMARY}`,
    restored,
    detectedAt: () => undefined,
    detectionNote: "planned: nothing to detect",
    stopWatching: () => undefined,
    rollSteps: () => steps,
  };
}
