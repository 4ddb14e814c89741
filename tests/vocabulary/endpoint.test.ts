import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { endpointKey, parseEndpoint, parseEndpointList } from "../../vocabulary/endpoint.js";
import { loadZoneFile, parseZoneMap, roundRobinZones, StaticZoneSource } from "../../core/topology/zones.js";

describe("endpoint parsing", () => {
  it.each([
    ["127.0.0.1:6379", { host: "127.0.0.1", port: 6379 }],
    [" valkey-0.valkey.svc:7000 ", { host: "valkey-0.valkey.svc", port: 7000 }],
    ["[::1]:6380", { host: "::1", port: 6380 }],
  ])("parses %s", (text, want) => {
    expect(parseEndpoint(text)).toEqual(want);
  });

  it.each(["", "localhost", "host:0", "host:65536", "host:port", ":6379", "a:b:c"])(
    "rejects '%s' naming it",
    (text) => {
      expect(() => parseEndpoint(text)).toThrow(`'${text}' is not HOST:PORT`);
    },
  );

  it("round-trips keys, bracketing IPv6", () => {
    expect(endpointKey({ host: "::1", port: 1 })).toBe("[::1]:1");
    expect(endpointKey(parseEndpoint("10.0.0.1:6379"))).toBe("10.0.0.1:6379");
  });

  it("parses lists and rejects empty ones", () => {
    expect(parseEndpointList("a:1, b:2,")).toEqual([
      { host: "a", port: 1 },
      { host: "b", port: 2 },
    ]);
    expect(() => parseEndpointList(" , ")).toThrow("names no HOST:PORT");
  });
});

describe("zones", () => {
  it("assigns zones round-robin in order", () => {
    const eps = [1, 2, 3, 4].map((port) => ({ host: "h", port }));
    expect(roundRobinZones(eps, ["a", "b", "c"])).toEqual({ "h:1": "a", "h:2": "b", "h:3": "c", "h:4": "a" });
    expect(() => roundRobinZones(eps, [])).toThrow("at least one zone");
  });

  it("static zone source returns only known endpoints", async () => {
    const src = new StaticZoneSource({ "h:1": "a" });
    const got = await src.zonesFor([
      { host: "h", port: 1 },
      { host: "h", port: 2 },
    ]);
    expect([...got]).toEqual([["h:1", "a"]]);
  });

  it.each([
    ["not json", "not valid JSON"],
    ["[]", "expected a JSON object"],
    ['{"nohostport": "a"}', "key 'nohostport' is not HOST:PORT"],
    ['{"h:1": ""}', 'zone for "h:1" must be a non-empty string'],
    ['{"h:1": 3}', 'zone for "h:1" must be a non-empty string'],
  ])("rejects zone map %s", (text, msg) => {
    expect(() => parseZoneMap(text)).toThrow(msg);
  });

  it("loads a zone file and names a missing one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "zones-"));
    const file = join(dir, "zones.json");
    writeFileSync(file, JSON.stringify({ "127.0.0.1:7000": "us-west-2a" }));
    const zones = await loadZoneFile(file).zonesFor([{ host: "127.0.0.1", port: 7000 }]);
    expect(zones.get("127.0.0.1:7000")).toBe("us-west-2a");
    expect(() => loadZoneFile(join(dir, "missing.json"))).toThrow(/cannot read zone file .*missing\.json/);
  });
});
