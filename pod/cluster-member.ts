/**
 * A cluster-mode member: everything its pod runs, assembled once. valkey.conf (the stack's, with a
 * local process's own lines after it when `local` is given), start.sh (auth and announce includes,
 * the rejoin gate, then heal.sh, rejoin.sh and failback.sh in the background), readiness.sh and
 * prestop.sh. The ConfigMap holds these files (components/valkey/cluster-manifests.ts) and a local
 * member writes the same ones into its directory (harness/drill/cluster-pod.ts).
 */
import { VALKEY_BUS_PORT } from "../vocabulary/ports.js";
import { renderAzFailbackScript, type AzFailbackScriptOptions } from "./az-failback-script.js";
import { renderClusterHealScript, type ClusterHealScriptOptions } from "./cluster-heal-script.js";
import { renderClusterRejoinScript, type ClusterRejoinScriptOptions } from "./cluster-rejoin-script.js";
import { CLI_AUTH_ENV, type PodDefinition } from "./definition.js";
import { memberDefinition, memberLayout, type MemberOptions } from "./member.js";
import {
  FAILBACK_SCRIPT_KEY,
  HEAL_SCRIPT_KEY,
  PRESTOP_SCRIPT_KEY,
  READINESS_SCRIPT_KEY,
  REJOIN_SCRIPT_KEY,
  START_SCRIPT_KEY,
} from "./paths.js";
import { DEFAULT_FAILOVER_TIMEOUT_SECONDS, renderPreStopScript, type PreStopScriptOptions } from "./prestop-script.js";
import { renderReadinessScript } from "./readiness-script.js";
import { renderStartScript, zoneFileOf } from "./start-script.js";

export const BACKGROUND_SCRIPTS = ["heal", "rejoin", "failback"] as const;
export type BackgroundScript = (typeof BACKGROUND_SCRIPTS)[number];
const BACKGROUND_KEYS: Record<BackgroundScript, string> = {
  heal: HEAL_SCRIPT_KEY,
  rejoin: REJOIN_SCRIPT_KEY,
  failback: FAILBACK_SCRIPT_KEY,
};

type Clock<T> = Omit<T, "port" | "localHost" | "zoneFile">;

export interface ClusterMemberOptions extends MemberOptions {
  /** @default VALKEY_BUS_PORT */
  busPort?: number;
  /**
   * The scripts start.sh runs in the background, in this order (rejoin.sh is also its start gate).
   * A pod runs all three; a test leaves one out to show what it does. @default all three
   */
  background?: readonly BackgroundScript[];
  /** The scripts' clocks, shortened by the local drills. @default each script's deployed defaults */
  heal?: Clock<ClusterHealScriptOptions>;
  rejoin?: Clock<ClusterRejoinScriptOptions>;
  failback?: Clock<AzFailbackScriptOptions>;
  preStop?: Clock<PreStopScriptOptions>;
}

/** Environment a cluster member's scripts read; the pod spec sets each (statefulset.ts). */
export function clusterMemberEnv(auth: boolean): string[] {
  return [
    "POD_NAME",
    "VALKEY_ANNOUNCE_HOST",
    "VALKEY_ANNOUNCE_IP",
    "VALKEY_AVAILABILITY_ZONE",
    ...(auth ? CLI_AUTH_ENV : []),
  ];
}

export function clusterMemberPod(o: ClusterMemberOptions): PodDefinition {
  const layout = memberLayout(o, { kind: "cluster-member" }, o.busPort ?? VALKEY_BUS_PORT);
  const { at, dataDir, self, start } = layout;
  const background = o.background ?? BACKGROUND_SCRIPTS;
  const scripts = {
    [START_SCRIPT_KEY]: renderStartScript({
      mode: "cluster",
      ...start,
      backgroundScripts: background.map((b) => at(BACKGROUND_KEYS[b])),
      ...(background.includes("rejoin") ? { rejoinGate: at(REJOIN_SCRIPT_KEY) } : {}),
      holdFailover: background.includes("heal"),
    }),
    [HEAL_SCRIPT_KEY]: renderClusterHealScript({ ...o.heal, ...self }),
    [REJOIN_SCRIPT_KEY]: renderClusterRejoinScript({ ...o.rejoin, ...self }),
    [FAILBACK_SCRIPT_KEY]: renderAzFailbackScript({ ...o.failback, ...self, zoneFile: zoneFileOf(dataDir) }),
    [READINESS_SCRIPT_KEY]: renderReadinessScript({ mode: "cluster", ...self, restore: o.restore }),
    [PRESTOP_SCRIPT_KEY]: renderPreStopScript({
      timeoutSeconds: DEFAULT_FAILOVER_TIMEOUT_SECONDS,
      ...o.preStop,
      ...self,
    }),
  };
  return memberDefinition(layout, scripts, clusterMemberEnv(o.auth));
}
