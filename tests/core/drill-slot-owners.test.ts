import { describe, expect, it } from "vitest";
import { slotOwners } from "../../core/drill/load.js";

const A = "valkey-cluster-0.headless:6379";
const B = "valkey-cluster-3.headless:6379";

describe("a cluster no-WAIT write's node, from the slot table at the send and at the reply", () => {
  it.each([
    ["the same owner both times: that node", { node: A }, { node: A }, { node: A }],
    [
      "the table moved on in between (a failover, a thaw): both, sent first",
      { node: A },
      { node: B },
      { node: `${A}→${B}` },
    ],
    ["no owner at the send: the reply's", {}, { node: B }, { node: B }],
    ["no owner at the reply: the send's", { node: A }, {}, { node: A }],
    ["neither: unknown", {}, {}, {}],
  ])("%s", (_name, sent: { node?: string }, at: { node?: string }, want: { node?: string }) => {
    expect(slotOwners(sent, at)).toEqual(want);
  });
});
