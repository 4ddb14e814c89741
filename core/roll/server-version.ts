/** What version each member and Sentinel runs, from its own INFO server (`valkey_version`). */
import { openClient } from "../topology/connector.js";
import { parseInfo } from "../topology/info.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";

/** `host:port` → the version it reports (or `unreachable: <why>`). */
export async function serverVersions(
  endpoints: readonly NodeEndpoint[],
  password: string | undefined,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    endpoints.map(async (e) => {
      const key = endpointKey(e);
      try {
        const c = await openClient(e.host, e.port, key, { password, connectTimeoutMs: 2000, commandTimeoutMs: 2000 });
        try {
          const info = parseInfo(String(await c.call("INFO", "server")));
          out.set(key, info.get("valkey_version") ?? info.get("redis_version") ?? "unknown");
        } finally {
          c.disconnect();
        }
      } catch (err) {
        out.set(key, `unreachable: ${(err as Error).message}`);
      }
    }),
  );
  return out;
}

/** Throws naming every endpoint that does not run `version`. */
export function requireVersion(versions: ReadonlyMap<string, string>, version: string, what: string): void {
  const stale = [...versions].filter(([, v]) => v !== version);
  if (stale.length > 0)
    throw new Error(`${what}: ${stale.map(([k, v]) => `${k} runs ${v}`).join(", ")} (expected ${version})`);
}
