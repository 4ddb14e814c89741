/**
 * Who writes in a drill, as names the ledger can read back. Every client path (cluster: every
 * shard too) runs two writers side by side, each on its own connections:
 *
 * - `no-wait`: a plain SET, as most applications write. Its loss is THE acknowledged-loss figure.
 * - `wait`: SET pipelined with `WAIT 1 <timeout>` (and ROLE) on one connection: the WAIT-confirmed
 *   ledger. WAIT slows this writer (one pipeline per write waits for a replica), so a fault costs
 *   it fewer acknowledged writes than the no-WAIT writer: its loss is its own column.
 *
 * A stream's name carries both: `<client>` or `<client>+wait`, then `@<shard>` in cluster mode,
 * where the shard is named by the slot ranges its primary served when the load started
 * (`0-5460`, `0-99,200-5460`), so the name alone says how much of the keyspace it stands for.
 * Pure.
 */
import { CLUSTER_SLOT_COUNT, type SlotRange } from "../topology/slots.js";

export type Writer = "no-wait" | "wait";

export interface StreamId {
  /** The client path: cluster-client, sentinel-client, write-endpoint. */
  client: string;
  writer: Writer;
  /** Cluster mode: the shard's slot ranges (shardLabel). */
  shard?: string;
}

const WAIT_SUFFIX = "+wait";

export function streamName(s: StreamId): string {
  return `${s.client}${s.writer === "wait" ? WAIT_SUFFIX : ""}${s.shard === undefined ? "" : `@${s.shard}`}`;
}

/** The inverse of streamName; a name without `+wait` is a no-WAIT writer, one without `@` has no shard. */
export function parseStreamName(name: string): StreamId {
  const at = name.indexOf("@");
  const head = at < 0 ? name : name.slice(0, at);
  const shard = at < 0 ? undefined : name.slice(at + 1);
  const wait = head.endsWith(WAIT_SUFFIX);
  return {
    client: wait ? head.slice(0, -WAIT_SUFFIX.length) : head,
    writer: wait ? "wait" : "no-wait",
    ...(shard === undefined ? {} : { shard }),
  };
}

/** `0-5460` / `0-99,200-5460`: a shard's name from its slot ranges, sorted. */
export function shardLabel(ranges: readonly SlotRange[]): string {
  return [...ranges]
    .sort((a, b) => a.start - b.start)
    .map((r) => (r.start === r.end ? String(r.start) : `${r.start}-${r.end}`))
    .join(",");
}

/** The slot ranges a shard label names; throws on anything else. */
export function labelRanges(label: string): SlotRange[] {
  return label.split(",").map((part) => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (m === null) throw new Error(`not a shard label (slot ranges): ${JSON.stringify(label)}`);
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    if (end < start || end >= CLUSTER_SLOT_COUNT)
      throw new Error(`not a shard label (slot ranges): ${JSON.stringify(label)}`);
    return { start, end };
  });
}

/** How many slots a shard label names. */
export const labelSlots = (label: string): number => labelRanges(label).reduce((n, r) => n + r.end - r.start + 1, 0);

export const inRanges = (slot: number, ranges: readonly SlotRange[]): boolean =>
  ranges.some((r) => slot >= r.start && slot <= r.end);

/** A shard the load writes to: its label, and the hash tag whose slot lies in it (each key carries `{tag}`). */
export interface LoadShard {
  label: string;
  tag: string;
  /** The tag's slot. */
  slot: number;
  /** The shard's members when the load started (primary first): the fault's victims map to shards by these ids. */
  nodeIds: string[];
}

/**
 * The first candidate tag whose slot (as the server computed it: CLUSTER KEYSLOT) lies in the
 * shard's ranges; undefined when none does.
 */
export function pickTag(
  ranges: readonly SlotRange[],
  candidates: readonly { tag: string; slot: number }[],
): { tag: string; slot: number } | undefined {
  return candidates.find((c) => inRanges(c.slot, ranges));
}
