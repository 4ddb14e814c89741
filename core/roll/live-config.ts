/**
 * A valkey.conf change without a restart: the loop that sets the LIVE directives
 * (pod/conf-directives.ts decides which are) on every member through a connector, reads each back
 * with `CONFIG GET`, and fails naming the member and the key that did not take. Which change needs
 * a roll instead is not decided here: the members' pod-template hash covers the RESTART part of
 * valkey.conf (`restartFiles`), so the RollingRestart step rolls it. Shared by the deployed
 * LiveConfig step (components/steps/live-config/) and the tests on real valkey-server processes.
 */
import { directiveClass } from "../../pod/conf-directives.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { Connector } from "../topology/connector.js";

/** A member the loop reaches: its name (what errors say) and the endpoint the connector dials. */
export interface LiveMember {
  name: string;
  endpoint: NodeEndpoint;
}

/** One directive that did not take on one member (`key` absent: the member could not be reached). */
export interface LiveConfigFailure {
  member: string;
  key?: string;
  reason: string;
}

export class LiveConfigError extends Error {
  constructor(readonly failures: readonly LiveConfigFailure[]) {
    const lines = failures.map((f) => `  ${f.member}${f.key === undefined ? "" : ` ${f.key}`}: ${f.reason}`);
    super(`live config: ${failures.length} directive(s) did not take (member key: reason):\n${lines.join("\n")}`);
    this.name = "LiveConfigError";
  }
}

export interface LiveConfigResult {
  /** The directives set, sorted. */
  keys: string[];
  /** The members each of them was set and confirmed on. */
  members: string[];
}

/** The form CONFIG GET answers in (enums and booleans in lower case, one space between words). */
const canonical = (v: string): string => v.trim().replace(/\s+/g, " ").toLowerCase();

/**
 * Sets every directive of `directives` with `CONFIG SET` on every member (one key at a time, so a
 * refusal names its key), reads each back with `CONFIG GET`, and throws a LiveConfigError listing
 * each member and key that was refused or reads back another value. Refuses, before touching any
 * member, a directive that is not LIVE. CONFIG SET of the value a member already has changes
 * nothing, so running it again (or after a restart that read the new file) is harmless.
 */
export async function applyLiveConfig(
  members: readonly LiveMember[],
  directives: Readonly<Record<string, string>>,
  connector: Connector,
  log?: (line: string) => void,
): Promise<LiveConfigResult> {
  const keys = Object.keys(directives).sort();
  const notLive = keys.filter((k) => directiveClass(k).apply !== "live");
  if (notLive.length > 0)
    throw new Error(
      `live config: ${notLive.join(", ")} cannot be set live (pod/conf-directives.ts): they need a rolling restart`,
    );
  if (members.length === 0) throw new Error("live config: no members to set");
  const failures: LiveConfigFailure[] = [];
  await Promise.all(
    members.map(async (m) => {
      let client;
      try {
        client = await connector.connect(m.endpoint);
      } catch (err) {
        failures.push({ member: m.name, reason: `cannot reach ${endpointKey(m.endpoint)}: ${(err as Error).message}` });
        return;
      }
      try {
        for (const key of keys) {
          const want = directives[key] as string;
          try {
            await client.call("CONFIG", "SET", key, want);
            const got = (await client.call("CONFIG", "GET", key)) as string[];
            const value = got[1];
            if (value === undefined)
              failures.push({ member: m.name, key, reason: `CONFIG GET ${key} answered nothing` });
            else if (canonical(value) !== canonical(want))
              failures.push({ member: m.name, key, reason: `CONFIG GET answers '${value}', not '${want}'` });
          } catch (err) {
            failures.push({
              member: m.name,
              key,
              reason: `CONFIG SET ${key} '${want}' refused: ${(err as Error).message}`,
            });
          }
        }
        const refused = failures.filter((f) => f.member === m.name).length;
        log?.(`live config: ${m.name}: ${keys.length - refused} of ${keys.length} directive(s) set and confirmed`);
      } finally {
        client.disconnect();
      }
    }),
  );
  if (failures.length > 0)
    throw new LiveConfigError(
      failures.sort((a, b) => a.member.localeCompare(b.member) || (a.key ?? "").localeCompare(b.key ?? "")),
    );
  return { keys, members: members.map((m) => m.name) };
}
