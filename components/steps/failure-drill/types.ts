/**
 * What a FailureDrill reports and what it needs from the outside world (tests pass fakes; real-deps.ts the real ones).
 */
import type { AlertSeen, AlertSnapshot } from "../../../core/drill/alerts-seen.js";
import type { DurabilityConfig } from "../../../core/drill/bounds.js";
import type { DrillOutcome } from "../../../core/drill/ledger.js";
import type { FailoverSteps, SentinelEventRow } from "../../../core/drill/sentinel-events.js";
import type { TopologyCheckReport } from "../../../core/verify/check-report.js";
import type { ClusterRoleRow, DetectionWatch } from "./detection.js";
import type { DrillKubeApi, DrillPod } from "./kube-api.js";

/**
 * One drill's figures: the local DrillResult's (the same loadFigures), minus the timeline, plus where they came from.
 */
export interface DeployedDrill extends DrillOutcome {
  timings: { failureDetectionMs: number; zoneDownMs: number };
  /** The primary's settings the loss bound was computed from. */
  durability: DurabilityConfig;
  /** The verifier's report once healed. */
  after: TopologyCheckReport;
  /**
   * When the fault took effect (ISO 8601, the program's clock): the zero every `…Ms` figure of the row counts from, to
   * find the drill on a dashboard or in an alert history.
   */
  faultAt: string;
  /** The load Job's pod whose log was read. */
  loadPod: string;
  /** The pods the fault deleted or evicted, by name and UID (the UID finds their events, e.g. FailedPreStopHook). */
  deletedPods: Array<{ name: string; uid: string }>;
  /**
   * Replication: every event the Sentinels published from the fault on (ms from the fault, the Sentinel's pod),
   * received through the connector.
   */
  sentinelEvents?: SentinelEventRow[];
  /** Replication: when the Sentinels reported each failover step first (from sentinelEvents). */
  failoverSteps?: FailoverSteps;
  /**
   * With `drills.alertsFrom`: every alert that Prometheus's history shows pending or firing from the previous drill's
   * fault (the first drill: its load's start) to the next one's (the last: the settle after it), ms from this fault.
   */
  alerts?: AlertSeen[];
  /** With `drills.alertsFrom`, when that history could not be read: why (the drills' figures stand). */
  alertsNote?: string;
  /**
   * Cluster: every member's role as the polls of the survivors saw it, from one poll right before the fault on (ms
   * from the fault): whether the fault hit a serving primary, and when roles moved.
   */
  clusterRoles?: ClusterRoleRow[];
}

/** What a drill needs from the outside world; tests pass fakes. */
export interface DrillDeps {
  api: DrillKubeApi;
  /** The topology check's verifier, once; rejects when the topology fails or cannot be reached. */
  verify: () => Promise<TopologyCheckReport>;
  /** key → value read back after recovery (undefined: missing). */
  readBack: (keys: readonly string[], healed: TopologyCheckReport) => Promise<Map<string, string | undefined>>;
  /** The healthy primary's durability settings (CONFIG GET), for the fault's loss bound. */
  durability: (healthy: TopologyCheckReport) => Promise<DurabilityConfig>;
  /** The bundled load.mjs. */
  loadScript: () => Promise<string>;
  /** Watches the survivors for failure marks (detection.ts); absent: detectionMs is not observed. */
  watchDetection?: (members: readonly DrillPod[], sentinels: readonly DrillPod[]) => Promise<DetectionWatch>;
  /**
   * With `drills.alertsFrom`: how long after the last drill to wait for its alerts' evaluation, and the ALERTS history
   * between two times (ms since the epoch).
   */
  alerts?: { settleMs: () => Promise<number>; history: (fromMs: number, toMs: number) => Promise<AlertSnapshot[]> };
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** @default 6 random hex characters */
  runKey?: () => string;
}
