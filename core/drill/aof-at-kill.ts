/**
 * A crash drill's second reading of its loss: what the killed primary's server said of its AOF
 * right before the SIGKILL (`INFO persistence`). With `appendfsync everysec` an acknowledged write
 * is already written to the file (the page cache, which a process kill keeps) unless the server
 * is holding its AOF buffer behind a slow background fsync (up to AOF_HELD_BUFFER_MS, bounds.ts);
 * what it holds at the kill is what the kill loses. So `aof_buffer_length` at the kill, divided by
 * the AOF bytes of one of the drill's SETs, is the server's own estimate of the writes the ledger
 * should find lost (writes acknowledged between the read and the kill come on top), and
 * `aof_delayed_fsync` counts the holds since the server started. Measured on a throttled disk
 * (tests/harness/aof-held-buffer.test.ts) the two readings agreed within 3 %.
 */
import { withNodeClient } from "./node-client.js";
import type { WriteRecord } from "./ledger.js";

export interface AofAtKill {
  /** `aof_buffer_length`: bytes acknowledged but not yet written to the AOF file. */
  bufferBytes: number;
  /** `aof_delayed_fsync`: times the server held its buffer behind a slow fsync since it started. */
  delayedFsync: number;
  /** The held bytes over the AOF bytes of the drill's average acknowledged SET; null without one. */
  heldWritesEstimate: number | null;
}

/** The two fields of an `INFO persistence` reply; throws naming a field that is missing. */
export function parseAofInfo(info: string): Omit<AofAtKill, "heldWritesEstimate"> {
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:(\\d+)\\r?$`, "m").exec(info);
    if (m === null) throw new Error(`INFO persistence has no ${name} (is appendonly on?)`);
    return Number(m[1]);
  };
  return { bufferBytes: field("aof_buffer_length"), delayedFsync: field("aof_delayed_fsync") };
}

/** INFO persistence of the server about to be killed (a short-lived connection). */
export function readAofInfo(
  host: string,
  port: number,
  password: string,
): Promise<Omit<AofAtKill, "heldWritesEstimate">> {
  return withNodeClient(host, port, password, async (c) => parseAofInfo(String(await c.info("persistence"))));
}

/** Bytes one `SET key value` takes in the AOF (RESP, as the server appends it). */
export function aofSetBytes(key: string, value: string): number {
  const bulk = (s: string): number => {
    const n = Buffer.byteLength(s);
    return `$${n}\r\n`.length + n + 2;
  };
  return "*3\r\n".length + bulk("SET") + bulk(key) + bulk(value);
}

/** The reading with its estimate of held writes, from the acknowledged records' average SET. */
export function aofAtKill(read: Omit<AofAtKill, "heldWritesEstimate">, records: readonly WriteRecord[]): AofAtKill {
  const acked = records.filter((r) => r.ok);
  const perSet = acked.reduce((sum, r) => sum + aofSetBytes(r.key, r.value), 0) / (acked.length || 1);
  return { ...read, heldWritesEstimate: acked.length === 0 ? null : Math.round(read.bufferBytes / perSet) };
}

/** One line for the drill's log and summary. */
export function renderAofAtKill(a: AofAtKill): string {
  const est = a.heldWritesEstimate === null ? "" : ` (≈ ${a.heldWritesEstimate} writes)`;
  return `AOF at the kill: ${a.bufferBytes} bytes held${est}, aof_delayed_fsync ${a.delayedFsync}`;
}
