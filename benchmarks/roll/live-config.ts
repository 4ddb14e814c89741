/**
 * Applies the live valkey.conf directives (pod/live-config.ts) to running members: `CONFIG SET`
 * each one, then `CONFIG GET` to confirm the server holds exactly that value. No restart, no
 * write stop. Used by the LiveConfig step on the pods and by the tests on real processes.
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { LiveDirective } from "../../pod/live-config.js";
import type { Connector } from "../topology/connector.js";

export interface LiveConfigResult {
  /** `name value` of each directive set, in order. */
  applied: string[];
  /** The members it was set and confirmed on. */
  members: string[];
}

/** CONFIG GET's value as CONFIG SET took it: a memory value is bytes either way, the rest verbatim. */
const same = (got: string | undefined, want: string): boolean => got !== undefined && got.trim() === want.trim();

/**
 * Sets every directive on every member (one member at a time, all its directives, then checks
 * them); throws naming the member, the directive and the server's answer on the first refusal or
 * mismatch. Members set before the failure keep the new values (CONFIG SET is idempotent: the next
 * `up` sets them again).
 */
export async function applyLiveConfig(members: readonly NodeEndpoint[], directives: readonly LiveDirective[], connector: Connector): Promise<LiveConfigResult> {
  const done: string[] = [];
  for (const m of members) {
    const where = endpointKey(m);
    const c = await connector.connect(m);
    try {
      for (const d of directives) {
        try {
          await c.call("CONFIG", "SET", d.name, d.value);
        } catch (e) {
          throw new Error(`live config: CONFIG SET ${d.name} "${d.value}" on ${where} was refused: ${(e as Error).message}`, { cause: e });
        }
      }
      for (const d of directives) {
        const got = ((await c.call("CONFIG", "GET", d.name)) as string[])[1];
        if (!same(got, d.value)) throw new Error(`live config: ${where} holds ${d.name} "${got ?? "(none)"}" after CONFIG SET "${d.value}"`);
      }
    } finally {
      c.disconnect();
    }
    done.push(where);
  }
  return { applied: directives.map((d) => `${d.name} ${d.value}`), members: done };
}
