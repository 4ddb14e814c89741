/**
 * Parses `CLUSTER NODES` replies. Each line:
 *
 *   <id> <ip:port@cport[,hostname[,aux...]]> <flags> <primary-id|-> <ping-sent> <pong-recv> <config-epoch> <link-state>
 *   <slot>...
 *
 * flags: myself, master, slave, fail?, fail, handshake, noaddr, nofailover, noflags.
 * slots: `0-5460`, `42`, and `[slot->-node]` / `[slot-<-node]` migrating / importing
 * entries, which say nothing about ownership and are skipped. Lines that do not have this
 * shape are returned in `invalid` rather than thrown on.
 */
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { SlotRange } from "./slots.js";

export interface ClusterNodeEntry {
  id: string;
  /** Announced client endpoint; undefined for `noaddr` / `:0` (address not known yet). */
  endpoint: NodeEndpoint | undefined;
  busPort: number | undefined;
  hostname: string | undefined;
  flags: string[];
  myself: boolean;
  role: "primary" | "replica" | "unknown";
  /** The primary's node id, for replicas. */
  primaryId: string | undefined;
  /** Flag `fail`: the cluster agreed the node is down. */
  failed: boolean;
  /** Flag `fail?`: this view suspects the node is down. */
  pfail: boolean;
  handshake: boolean;
  linkState: string;
  configEpoch: number;
  slots: SlotRange[];
  /** The line as received, for messages. */
  line: string;
}

export interface ParsedClusterNodes {
  nodes: ClusterNodeEntry[];
  invalid: string[];
}

const NODE_ID = /^[0-9a-f]{40}$/i;

/** Splits `ip:port@cport[,hostname...]`; the last colon separates the port (IPv6 hosts). */
export function parseNodeAddress(
  field: string,
): { endpoint: NodeEndpoint | undefined; busPort: number | undefined; hostname: string | undefined } | undefined {
  const comma = field.indexOf(",");
  const addr = comma < 0 ? field : field.slice(0, comma);
  const hostname = comma < 0 ? undefined : field.slice(comma + 1).split(",")[0] || undefined;
  const at = addr.indexOf("@");
  const hostPort = at < 0 ? addr : addr.slice(0, at);
  const busText = at < 0 ? undefined : addr.slice(at + 1);
  const colon = hostPort.lastIndexOf(":");
  if (colon < 0) return undefined;
  let host = hostPort.slice(0, colon);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const portText = hostPort.slice(colon + 1);
  if (!/^\d+$/.test(portText) || (busText !== undefined && !/^\d+$/.test(busText))) return undefined;
  const port = Number(portText);
  const busPort = busText === undefined ? undefined : Number(busText);
  const endpoint = host === "" || port === 0 ? undefined : { host, port };
  return { endpoint, busPort, hostname };
}

function parseSlot(token: string, out: SlotRange[]): boolean {
  if (token.startsWith("[")) return token.endsWith("]"); // migrating / importing: not ownership
  const dash = token.indexOf("-");
  const start = Number(dash < 0 ? token : token.slice(0, dash));
  const end = dash < 0 ? start : Number(token.slice(dash + 1));
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end > 16383) return false;
  out.push({ start, end });
  return true;
}

/** Parses one line; undefined when it is not a CLUSTER NODES entry. */
export function parseClusterNodeLine(line: string): ClusterNodeEntry | undefined {
  const trimmed = line.trim();
  const f = trimmed.includes("  ") || trimmed.includes("\t") ? trimmed.split(/\s+/) : trimmed.split(" ");
  if (f.length < 8) return undefined;
  const [id, addrField, flagField, primaryField, , , epochField, linkState] = f as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!NODE_ID.test(id)) return undefined;
  const addr = parseNodeAddress(addrField);
  if (addr === undefined) return undefined;
  if (primaryField !== "-" && !NODE_ID.test(primaryField)) return undefined;
  const flags = flagField.split(",");
  const slots: SlotRange[] = [];
  for (let i = 8; i < f.length; i++) if (!parseSlot(f[i] as string, slots)) return undefined;
  const has = (x: string): boolean => flags.includes(x);
  return {
    id,
    endpoint: has("noaddr") ? undefined : addr.endpoint,
    busPort: addr.busPort,
    hostname: addr.hostname,
    flags,
    myself: has("myself"),
    role: has("master") ? "primary" : has("slave") ? "replica" : "unknown",
    primaryId: primaryField === "-" ? undefined : primaryField,
    failed: has("fail"),
    pfail: has("fail?"),
    handshake: has("handshake"),
    linkState,
    configEpoch: Number(epochField),
    slots,
    line: trimmed,
  };
}

export function parseClusterNodes(text: string): ParsedClusterNodes {
  const nodes: ClusterNodeEntry[] = [];
  const invalid: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const entry = parseClusterNodeLine(line);
    if (entry) nodes.push(entry);
    else invalid.push(line);
  }
  return { nodes, invalid };
}

/**
 * The parts of one node's CLUSTER NODES view the verifier needs from nodes other than
 * the seed: its own line, the lines it flags `fail` / `fail?`, and how many nodes it knows.
 * Taken as each reply arrives, so a 2000-node cluster's 2000 views (4 million lines) are
 * never held or parsed whole.
 */
export interface ClusterNodesDigest {
  self: string | undefined;
  flagged: string[];
  knownNodes: number;
}

export function digestClusterNodes(text: string): ClusterNodesDigest {
  let self: string | undefined;
  const flagged: string[] = [];
  let knownNodes = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === "") continue;
    knownNodes++;
    // Only the flags field (third) matters; a cheap substring test first.
    if (line.includes("myself") || line.includes("fail")) {
      const flags = line.trim().split(/\s+/)[2] ?? "";
      const list = flags.split(",");
      if (list.includes("myself")) self = line.trim();
      if (list.includes("fail") || list.includes("fail?")) flagged.push(line.trim());
    }
  }
  return { self, flagged, knownNodes };
}
