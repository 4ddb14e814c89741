/**
 * The rolling restart's view of the clients' endpoint (replication mode's HAProxy): whether it
 * counts every Sentinel naming the primary again (pod/haproxy-checks.ts SENTINELS_PATH), asked
 * after the verifier passes and before the next step (rolling-restart.ts RollOps.endpointsSettled).
 */
import { SENTINELS_PATH } from "../../pod/haproxy-checks.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";

/** undefined when the HAProxy status frontend at `status` answers 200 on SENTINELS_PATH; else why not, naming `who`. */
export async function sentinelsCounted(status: NodeEndpoint, who: string): Promise<string | undefined> {
  const host = status.host.includes(":") ? `[${status.host}]` : status.host;
  try {
    const r = await fetch(`http://${host}:${status.port}${SENTINELS_PATH}`, { signal: AbortSignal.timeout(3000) });
    await r.arrayBuffer();
    return r.status === 200
      ? undefined
      : `${who} does not count every Sentinel naming the primary yet (${SENTINELS_PATH} answered ${r.status})`;
  } catch (e) {
    return `${who} did not answer ${SENTINELS_PATH} (${(e as Error).message})`;
  }
}
