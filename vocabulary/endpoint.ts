/** A Valkey node's network identity, `host:port`, as announced by the node itself. */

export interface NodeEndpoint {
  host: string;
  port: number;
}

/** `host:port`: the key used in zone maps, reports and failure records. */
export function endpointKey(e: NodeEndpoint): string {
  return e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}

/** Parses `host:port` (or `[v6]:port`), naming the bad value in the error. */
export function parseEndpoint(text: string): NodeEndpoint {
  const trimmed = text.trim();
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(trimmed) ?? /^([^:\s]+):(\d+)$/.exec(trimmed);
  const port = m?.[2] === undefined ? NaN : Number(m[2]);
  if (!m?.[1] || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`'${text}' is not HOST:PORT (expected e.g. 127.0.0.1:6379)`);
  }
  return { host: m[1], port };
}

/** Parses a comma-separated `HOST:PORT[,HOST:PORT...]` list. */
export function parseEndpointList(text: string): NodeEndpoint[] {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length === 0) throw new Error(`'${text}' names no HOST:PORT`);
  return parts.map(parseEndpoint);
}
