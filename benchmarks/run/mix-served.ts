/**
 * What the server saw of a mixed workload: `INFO commandstats` from every member before and after
 * the run, the per-command deltas, and the check that the served shares are the mix's. Pure except
 * snapshotCommandstats.
 *
 * Served vs replicated. A replica executes its primary's write stream, and counts those commands
 * in its own commandstats: a replica's SET calls are writes it was sent, not requests it served.
 * The served share is therefore computed over the members that were primaries (role:master) at the
 * end of the run; the replicas' deltas are reported apart, as "replicated".
 */
import type { Redis } from "ioredis";
import { BENCHMARK_TEST_COMMANDS, type MixEntry } from "../../vocabulary/workload.js";
import { parseInfo, parseInfoFields } from "../topology/info.js";

/** A member's per-command counters: calls, and the failed / rejected calls Valkey ≥ 7 counts apart. */
export type Commandstats = Map<string, { calls: number; failed: number; rejected: number }>;

/** Parses `INFO commandstats` (`cmdstat_get:calls=5,usec=...,failed_calls=0,rejected_calls=0`). */
export function parseCommandstats(text: string): Commandstats {
  const out: Commandstats = new Map();
  for (const [key, value] of parseInfo(text)) {
    if (!key.startsWith("cmdstat_")) continue;
    const f = parseInfoFields(value);
    out.set(key.slice("cmdstat_".length).toLowerCase(), {
      calls: Number(f.get("calls") ?? 0),
      failed: Number(f.get("failed_calls") ?? 0),
      rejected: Number(f.get("rejected_calls") ?? 0),
    });
  }
  return out;
}

/** One member's commandstats and role, read with INFO (two sections, one round trip each). */
export async function snapshotCommandstats(client: Redis): Promise<{ stats: Commandstats; primary: boolean }> {
  const stats = parseCommandstats(await client.info("commandstats"));
  const role = parseInfo(await client.info("replication")).get("role");
  return { stats, primary: role === "master" };
}

/** after − before, per command (commands absent before count from 0). */
export function commandstatsDelta(before: Commandstats, after: Commandstats): Commandstats {
  const out: Commandstats = new Map();
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, failed: 0, rejected: 0 };
    const d = { calls: a.calls - b.calls, failed: a.failed - b.failed, rejected: a.rejected - b.rejected };
    if (d.calls !== 0 || d.failed !== 0 || d.rejected !== 0) out.set(name, d);
  }
  return out;
}

export interface MemberDelta {
  /** `host:port`. */
  member: string;
  primary: boolean;
  delta: Commandstats;
}

/** One command of the mix as the server saw it. */
export interface ServedCommand {
  /** The mix's test name (`get`). */
  test: string;
  /** The commandstats name (`get`). */
  command: string;
  wantedPercent: number;
  /** Calls on the primaries. */
  served: number;
  /** served ÷ all the mix's calls on the primaries, in percent. */
  servedPercent: number;
  failed: number;
  rejected: number;
  /** Calls of this command on the replicas (their primary's write stream). */
  replicated: number;
}

export interface ServedMix {
  commands: ServedCommand[];
  /** All the mix's calls on the primaries. */
  total: number;
  /** Calls of commands outside the mix on the primaries (the client's INFO, CLUSTER SLOTS, other clients). */
  other: Record<string, number>;
  /** Per member, as measured. */
  members: MemberDelta[];
}

/** Sums the members' deltas into the mix's served view (see the module comment). */
export function servedMix(mix: readonly MixEntry[], members: readonly MemberDelta[]): ServedMix {
  const sum = (primary: boolean, command: string, k: "calls" | "failed" | "rejected"): number =>
    members.filter((m) => m.primary === primary).reduce((n, m) => n + (m.delta.get(command)?.[k] ?? 0), 0);
  const mixCommands = new Set(mix.map((e) => BENCHMARK_TEST_COMMANDS[e.test]));
  const total = [...mixCommands].reduce((n, c) => n + sum(true, c, "calls"), 0);
  const commands = mix.map((e): ServedCommand => {
    const command = BENCHMARK_TEST_COMMANDS[e.test];
    const served = sum(true, command, "calls");
    return {
      test: e.test,
      command,
      wantedPercent: e.percent,
      served,
      servedPercent: total === 0 ? 0 : (100 * served) / total,
      failed: sum(true, command, "failed"),
      rejected: sum(true, command, "rejected"),
      replicated: sum(false, command, "calls"),
    };
  });
  const other: Record<string, number> = {};
  for (const m of members.filter((x) => x.primary)) for (const [name, d] of m.delta) if (!mixCommands.has(name)) other[name] = (other[name] ?? 0) + d.calls;
  return { commands, total, other, members: [...members] };
}

/** The served mix is not the one asked for. */
export class MixMismatchError extends Error {
  constructor(
    message: string,
    readonly served: ServedMix,
  ) {
    super(message);
    this.name = "MixMismatchError";
  }
}

/**
 * Throws MixMismatchError naming every command whose served share is off the wanted one by more
 * than `tolerancePercent` percentage points, or that the server failed or rejected; and when the
 * primaries served none of the mix at all.
 */
export function checkServedMix(s: ServedMix, tolerancePercent: number): void {
  if (s.total === 0) throw new MixMismatchError("the primaries served none of the mix's commands (INFO commandstats deltas are all 0)", s);
  const off = s.commands.flatMap((c) => {
    const out: string[] = [];
    if (Math.abs(c.servedPercent - c.wantedPercent) > tolerancePercent)
      out.push(`${c.test.toUpperCase()}: wanted ${c.wantedPercent}%, served ${c.servedPercent.toFixed(2)}% (${c.served} of ${s.total} calls)`);
    if (c.failed + c.rejected > 0) out.push(`${c.test.toUpperCase()}: ${c.failed} failed and ${c.rejected} rejected calls`);
    return out;
  });
  if (off.length > 0)
    throw new MixMismatchError(
      `the server did not serve the mix asked for (tolerance ±${tolerancePercent} points, from INFO commandstats): ${off.join("; ")}`,
      s,
    );
}

/** `GET 80.00% (wanted 80%) 12345 calls, replicated 0; ...` for a row's notes and summary.md. */
export function servedNote(s: ServedMix): string {
  const other = Object.entries(s.other)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return (
    `served (INFO commandstats on the primaries): ` +
    s.commands
      .map((c) => `${c.test.toUpperCase()} ${c.servedPercent.toFixed(2)}% (wanted ${c.wantedPercent}%) ${c.served} calls, replicated ${c.replicated}`)
      .join("; ") +
    (other === "" ? "" : `; other commands ${other}`)
  );
}
