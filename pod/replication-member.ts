/**
 * A replication-mode member under Sentinel: everything its pod runs, assembled once. valkey.conf
 * (no fixed role: start.sh asks the Sentinels and writes `replicaof` or nothing into its include;
 * a local process's own lines after it when `local` is given), start.sh, readiness.sh and the
 * switchover preStop. The ConfigMap holds these files (components/valkey/replication-manifests.ts)
 * and a local member writes the same ones into its directory (harness/local/sentinel-topology.ts;
 * the local switchover runs its prestop.sh, harness/local/replication-prestop.ts).
 */
import { CLI_AUTH_ENV, type PodDefinition } from "./definition.js";
import { memberDefinition, memberLayout, type MemberOptions } from "./member.js";
import { PRESTOP_SCRIPT_KEY, READINESS_SCRIPT_KEY, START_SCRIPT_KEY } from "./paths.js";
import { renderReadinessScript } from "./readiness-script.js";
import {
  DEFAULT_SWITCHOVER_TIMEOUT_SECONDS,
  renderReplicationPreStopScript,
  type ReplicationPreStopOptions,
} from "./replication-prestop-script.js";
import type { ReplicationStartOptions } from "./replication-start.js";
import { renderStartScript } from "./start-script.js";

export interface ReplicationMemberOptions extends MemberOptions {
  masterName: string;
  /** The Sentinels, `host:port` each (pod DNS names in the cluster). */
  sentinels: readonly string[];
  /** The start decision's clocks, shortened by the local topologies. @default the deployed defaults */
  start?: Omit<
    ReplicationStartOptions,
    "masterName" | "sentinels" | "port" | "dataDir" | "includeFile" | "restore" | "localHost"
  >;
  /** The preStop's clocks. @default the deployed defaults */
  preStop?: Omit<ReplicationPreStopOptions, "masterName" | "sentinels" | "port" | "localHost">;
}

/** Environment a replication member's scripts read; the pod spec sets each (statefulset.ts). */
export function replicationMemberEnv(auth: boolean): string[] {
  return ["POD_NAME", "VALKEY_ANNOUNCE_HOST", ...(auth ? CLI_AUTH_ENV : [])];
}

export function replicationMemberPod(o: ReplicationMemberOptions): PodDefinition {
  const layout = memberLayout(o, { kind: "replication-member" });
  const { self, start } = layout;
  const scripts = {
    [START_SCRIPT_KEY]: renderStartScript({
      mode: "replication",
      ...start,
      sentinel: {
        ...o.start,
        masterName: o.masterName,
        sentinels: o.sentinels,
        port: self.port,
        ...(self.localHost === undefined ? {} : { localHost: self.localHost }),
        restore: o.restore,
      },
    }),
    [READINESS_SCRIPT_KEY]: renderReadinessScript({ mode: "replication", ...self }),
    [PRESTOP_SCRIPT_KEY]: renderReplicationPreStopScript({
      timeoutSeconds: DEFAULT_SWITCHOVER_TIMEOUT_SECONDS,
      ...o.preStop,
      masterName: o.masterName,
      sentinels: o.sentinels,
      ...self,
    }),
  };
  return memberDefinition(layout, scripts, replicationMemberEnv(o.auth));
}
