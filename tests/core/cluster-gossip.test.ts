/**
 * The bootstrap's waits (core/bootstrap/cluster-gossip.ts): a node that does not answer in time is a named answer
 * (the wait polls again) instead of the error that ended a 200-node bootstrap on a starved machine; a CLUSTER NODES
 * view counts only nodes past their handshake.
 */
import { afterAll, describe, expect, it } from "vitest";
import { askAll, settledNodes } from "../../core/bootstrap/cluster-gossip.js";
import { openClient } from "../../core/topology/connector.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";

const fleet = new LocalFleet();
afterAll(() => fleet.stopAll());

describe("cluster gossip waits", () => {
  it("askAll: a frozen node's command timeout is its answer, named; the others answer (real processes)", async () => {
    const [a, b] = await fleet.startMany(2, (i) => ({ name: `gossip-${i}`, clusterEnabled: true }));
    const nodes = await Promise.all(
      [a!, b!].map(async (p) => ({
        member: { id: p.address, zone: "z", endpoint: p, meet: { ip: p.host, port: p.port, busPort: 0 } },
        client: await openClient(p.host, p.port, p.address, { commandTimeoutMs: 300 }),
      })),
    );
    b!.signal("SIGSTOP");
    try {
      const answers = await askAll(nodes, async (c) => String(await c.call("CLUSTER", "INFO")));
      expect(answers[0]).toMatchObject({
        ok: true,
        value: expect.stringContaining("cluster_known_nodes:1") as unknown,
      });
      expect(answers[1]).toEqual({ ok: false, error: `${b!.address}: Command timed out` });
    } finally {
      b!.signal("SIGCONT");
      for (const n of nodes) n.client.disconnect();
    }
  });

  it("settledNodes counts the lines of nodes past their handshake and with an address", () => {
    const view = [
      "07c3 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460",
      "67ed 127.0.0.1:30002@40002 master - 0 1 2 connected 5461-10922",
      "e7d1 127.0.0.1:30003@40003 handshake - 0 0 0 connected",
      "f1a2 :0@0 master,noaddr - 0 0 3 disconnected",
      "",
    ].join("\n");
    expect(settledNodes(view)).toBe(2);
  });
});
