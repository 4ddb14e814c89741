/**
 * The network evidence a failed `up` on real pods prints (tests/pods/support/network-evidence.ts):
 * each pod whose IP some node's Cilium ipcache maps to another identity, or not at all, and every
 * other CiliumEndpoint claiming the same IP, named; a node whose ipcache could not be read, named.
 */
import { describe, expect, it } from "vitest";
import { describeDisagreements, describeResolution } from "../../pods/support/network-evidence.js";

const ep = (name: string, ip: string, identity: number | undefined, namespace = "ns") => ({
  namespace,
  name,
  ip,
  identity,
});
const entry = (ip: string, identity: number, name = "") => ({
  cidr: `${ip}/32`,
  identity,
  metadata: { source: "custom-resource", namespace: "ns", name },
});

describe("network evidence", () => {
  it("says so when every node maps each pod's IP to its CiliumEndpoint's identity", () => {
    const eps = [
      ep("valkey-0", "10.0.0.5", 100),
      ep("sentinel-0", "10.0.1.7", 200),
      ep("other", "10.0.2.9", 300, "elsewhere"),
    ];
    const view = [entry("10.0.0.5", 100), entry("10.0.1.7", 200)];
    const views = new Map([
      ["a", view],
      ["b", view],
    ]);
    expect(describeDisagreements("ns", eps, views)).toEqual([
      "  every node's ipcache maps each of the 2 pods' IPs to its CiliumEndpoint's identity",
    ]);
  });

  it("names the node with no entry, the node with another identity, an IP claimed twice and an unread node", () => {
    const eps = [
      ep("valkey-2", "10.0.1.5", 100),
      ep("sentinel-0", "10.0.0.7", 200),
      ep("old-job", "10.0.0.7", 999, "bench"),
    ];
    const views = new Map<string, ReturnType<typeof entry>[] | string>([
      ["a", [entry("10.0.1.5", 100), entry("10.0.0.7", 200)]],
      ["b", [entry("10.0.0.7", 999, "old-job")]],
      ["c", "no cilium-agent process"],
    ]);
    expect(describeDisagreements("ns", eps, views)).toEqual([
      "  valkey-2 10.0.1.5 (CiliumEndpoint identity 100): b: no entry",
      "  sentinel-0 10.0.0.7 (CiliumEndpoint identity 200): b: identity 999 (custom-resource ns/old-job); the same IP also claimed by bench/old-job",
      "  c: ipcache not read (no cilium-agent process)",
    ]);
  });

  it("calls a member's name current, stale or unresolved from a Sentinel pod, with the PING of its pod IP", () => {
    const m = { name: "valkey-1", ip: "10.0.1.5" };
    expect(describeResolution("valkey-sentinel-0", m, "10.0.1.5      STREAM valkey-1.h", "NOAUTH")).toBe(
      "  valkey-sentinel-0 -> valkey-1: resolves to 10.0.1.5 (current); PING its pod IP: NOAUTH",
    );
    expect(describeResolution("valkey-sentinel-0", m, "10.0.2.9      STREAM valkey-1.h", "PONG")).toBe(
      "  valkey-sentinel-0 -> valkey-1: resolves to 10.0.2.9 (STALE (pod IP 10.0.1.5)); PING its pod IP: PONG",
    );
    expect(describeResolution("valkey-sentinel-0", m, "failed: exit 2", "failed: timed out")).toBe(
      "  valkey-sentinel-0 -> valkey-1: resolves to failed: exit 2 (NOT RESOLVED); PING its pod IP: failed: timed out",
    );
  });
});
