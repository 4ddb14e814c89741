/**
 * The deployed valkey.conf, for local members: the same renderer the ConfigMap uses
 * (valkey-conf.ts) on the embedded default stack config, with only what a
 * local process must have differently appended after it (the last occurrence of a key wins in
 * valkey.conf): its log file instead of stdout, DEBUG for the tests, its own address as the source
 * of its outgoing connections (`bind-source-addr`: a pod sends from its pod IP, a local process from
 * 127.0.0.1 unless told; the partition fault's rules name it), and
 * any persistence or io-threads setting a caller overrides on purpose. Fencing
 * (`min-replicas-to-write` / `min-replicas-max-lag`), persistence and memory settings therefore
 * are the stack's, so local drills measure what the deployed settings do.
 */
import { parseStackConfig } from "../config/schema.js";
import type { ValkeyConfig } from "../config/types.js";
import { renderValkeyConf, type ValkeyConfOptions } from "./valkey-conf.js";

/** The `valkey` section of the embedded default stack config (what a stack deploys unless told otherwise). */
export function defaultValkeyConfig(): ValkeyConfig {
  return parseStackConfig({}).config.valkey;
}

/** What a local process sets on top of the deployed conf (each one a deliberate local difference). */
export interface LocalConfOverrides {
  logfile: string;
  appendonly?: boolean;
  /** RDB schedule; "" disables RDB. */
  save?: string;
  ioThreads?: number;
  /** cluster-node-timeout (cluster members): the local failure detection the drill was asked for. */
  clusterNodeTimeoutMs?: number;
  /**
   * cluster-preferred-endpoint-type (cluster members). The deployed conf says `hostname` (pod IPs
   * change); set `ip` where clients have no DNS for the announced names.
   */
  clusterEndpointType?: "ip" | "hostname";
  /** `bind-source-addr`: the address its replication links and cluster bus connect from. */
  bindSourceAddr?: string;
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The deployed valkey.conf text for `o`, then the local lines. */
export function renderDeployedLocalConf(valkey: ValkeyConfig, o: ValkeyConfOptions, local: LocalConfOverrides): string {
  const lines = [
    `# local process: the lines below override the deployed ones above`,
    `logfile ${quote(local.logfile)}`,
    `enable-debug-command local`,
  ];
  if (local.appendonly !== undefined) lines.push(`appendonly ${local.appendonly ? "yes" : "no"}`);
  if (local.save !== undefined) lines.push(`save ${quote(local.save)}`);
  if (local.ioThreads !== undefined) lines.push(`io-threads ${local.ioThreads}`);
  if (local.clusterNodeTimeoutMs !== undefined) lines.push(`cluster-node-timeout ${local.clusterNodeTimeoutMs}`);
  if (local.clusterEndpointType !== undefined)
    lines.push(`cluster-preferred-endpoint-type ${local.clusterEndpointType}`);
  if (local.bindSourceAddr !== undefined) lines.push(`bind-source-addr ${local.bindSourceAddr}`);
  return renderValkeyConf(valkey, o) + lines.join("\n") + "\n";
}
