/**
 * A soak's view of the servers: `INFO` (the default sections: memory, persistence, stats,
 * replication, ...) of every member, parsed into the fields a sample keeps (soak-fields.ts
 * INFO_NUMBERS / INFO_TEXTS). `parseMemberInfo` is pure; `InfoPoller` keeps one connection per
 * member for the whole soak (ioredis reconnects it after a restart) and reads all members at
 * once. A member that does not answer within `timeoutMs` (down, frozen, mid-restart) is a
 * sample with its `error` and no figures, never a stalled sampler.
 *
 * No filesystem, no Pulumi: usable from a bundled in-pod script.
 */
import { Redis } from "ioredis";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { INFO_NUMBERS, INFO_TEXTS } from "./soak-fields.js";
import type { MemberInfo } from "./soak-sample.js";

/** The sample fields of one member's INFO text. */
export function parseMemberInfo(member: string, text: string): MemberInfo {
  const info = parseInfo(text);
  const out: Record<string, string | number | null> = { member, error: null };
  for (const k of INFO_NUMBERS) {
    const v = info.get(k);
    const n = v === undefined ? Number.NaN : Number(v);
    out[k] = Number.isFinite(n) ? n : null;
  }
  for (const k of INFO_TEXTS) out[k] = info.get(k) ?? null;
  return out as MemberInfo;
}

/** A member that did not answer: its error, every field null. */
export function unreachableMember(member: string, error: string): MemberInfo {
  return { ...parseMemberInfo(member, ""), error };
}

export interface InfoPollerOptions {
  members: readonly NodeEndpoint[];
  password?: string;
  /** Per member per poll. @default 2000 */
  timeoutMs?: number;
}

/** Reads every member's INFO at once, over one kept connection per member. */
export class InfoPoller {
  private readonly clients: { member: string; client: Redis }[];
  private readonly timeoutMs: number;

  constructor(o: InfoPollerOptions) {
    this.timeoutMs = o.timeoutMs ?? 2000;
    this.clients = o.members.map((m) => {
      const client = new Redis({
        host: m.host,
        port: m.port,
        password: o.password,
        connectTimeout: this.timeoutMs,
        commandTimeout: this.timeoutMs,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        connectionName: "vbench-soak-info",
        lazyConnect: true,
      });
      client.on("error", () => undefined);
      return { member: endpointKey(m), client };
    });
  }

  /** Every member's INFO, in the members' order. */
  async poll(): Promise<MemberInfo[]> {
    return Promise.all(
      this.clients.map(async ({ member, client }) => {
        try {
          if (client.status === "wait" || client.status === "end") await client.connect();
          return parseMemberInfo(member, await client.info());
        } catch (err) {
          return unreachableMember(member, (err as Error).message);
        }
      }),
    );
  }

  close(): void {
    for (const { client } of this.clients) client.disconnect();
  }
}
