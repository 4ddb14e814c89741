/**
 * Where each node runs. The verifier and the bootstrap planner ask a `ZoneSource`; locally
 * the zones come from a JSON file or a round-robin assignment, on Kubernetes from
 * pod -> node -> `topology.kubernetes.io/zone`.
 */
import { readFileSync } from "node:fs";
import { endpointKey, parseEndpoint, type NodeEndpoint } from "../../vocabulary/endpoint.js";

export interface ZoneSource {
  /** Zone of each endpoint, keyed by `host:port`; endpoints it does not know are absent. */
  zonesFor(endpoints: readonly NodeEndpoint[]): Promise<Map<string, string>>;
}

export class StaticZoneSource implements ZoneSource {
  private readonly map: Map<string, string>;

  constructor(map: Record<string, string> | Map<string, string>) {
    this.map = new Map(map instanceof Map ? map : Object.entries(map));
  }

  zonesFor(endpoints: readonly NodeEndpoint[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const e of endpoints) {
      const key = endpointKey(e);
      const zone = this.map.get(key);
      if (zone !== undefined) out.set(key, zone);
    }
    return Promise.resolve(out);
  }
}

/** Parses a zone file's text: a JSON object `{"host:port": "zone", ...}`. */
export function parseZoneMap(text: string, source = "zone file"): Record<string, string> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new Error(`${source}: expected a JSON object mapping "host:port" to a zone name`);
  }
  const out: Record<string, string> = {};
  for (const [key, zone] of Object.entries(data as Record<string, unknown>)) {
    try {
      parseEndpoint(key);
    } catch (err) {
      throw new Error(`${source}: key ${(err as Error).message}`, { cause: err });
    }
    if (typeof zone !== "string" || zone.trim() === "") {
      throw new Error(`${source}: zone for "${key}" must be a non-empty string`);
    }
    out[endpointKey(parseEndpoint(key))] = zone;
  }
  return out;
}

export function loadZoneFile(path: string): StaticZoneSource {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read zone file ${path}: ${(err as Error).message}`, { cause: err });
  }
  return new StaticZoneSource(parseZoneMap(text, `zone file ${path}`));
}

/** Assigns `zones` to `endpoints` round-robin, in order: the local stand-in for real AZs. */
export function roundRobinZones(endpoints: readonly NodeEndpoint[], zones: readonly string[]): Record<string, string> {
  if (zones.length === 0) throw new Error("roundRobinZones needs at least one zone");
  const out: Record<string, string> = {};
  endpoints.forEach((e, i) => {
    out[endpointKey(e)] = zones[i % zones.length] as string;
  });
  return out;
}
