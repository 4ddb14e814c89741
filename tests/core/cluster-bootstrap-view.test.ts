/** The bootstrap's wait names the replicas a member does not see as replicas, with what its view says of each. */
import { describe, expect, it } from "vitest";
import { replicasNotSeen } from "../../core/bootstrap/cluster-bootstrap.js";

const id = (c: string): string => c.repeat(40);
const line = (nodeId: string, flags: string, master: string, link = "connected", slots = ""): string =>
  `${nodeId} 127.0.0.1:7000@17000,m ${flags} ${master} 0 1700000000000 1 ${link}${slots}`;
const replicas = [
  { id: "member-3", nodeId: id("d") },
  { id: "member-4", nodeId: id("e") },
];

describe("replicasNotSeen", () => {
  it.each([
    [
      "every replica listed as one: none",
      [
        line(id("a"), "myself,master", "-", "connected", " 0-8191"),
        line(id("d"), "slave", id("a")),
        line(id("e"), "slave", id("b")),
      ],
      [],
    ],
    [
      "one still a master in this view, its link down; one not listed",
      [line(id("a"), "myself,master", "-"), line(id("d"), "master", "-", "disconnected")],
      ["member-3 as master (replicaof -) disconnected", "member-4 not listed"],
    ],
    [
      "a replica flag without a primary does not count",
      [line(id("d"), "slave,fail?", "-"), line(id("e"), "myself,slave", id("a"))],
      ["member-3 as slave,fail? (replicaof -) connected"],
    ],
  ])("%s", (_what, lines, want) => {
    expect(replicasNotSeen(lines.join("\n"), replicas)).toEqual(want);
  });

  it("names the first few, then how many more", () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ id: `member-${i}`, nodeId: id(String(i)) }));
    expect(replicasNotSeen("", many, 2)).toEqual(["member-0 not listed", "member-1 not listed", "3 more"]);
  });
});
