/**
 * The rendered rejoin.sh: valid sh, bad options named, the password never in it. Its behaviour
 * on real processes is tested by tests/harness/drill-lost-volume.test.ts (lost replica and primary
 * volumes heal by themselves).
 */
import { describe, expect, it } from "vitest";
import { renderClusterRejoinScript } from "../../pod/cluster-rejoin-script.js";
import { run } from "../support/valkey-fixtures.js";

describe("renderClusterRejoinScript", () => {
  it("renders a script sh accepts, with the identity check and FORGET before MEET", async () => {
    const s = renderClusterRejoinScript({ port: 7001, localHost: "127.0.0.9" });
    await run("sh", ["-n", "-c", s]);
    expect(s).toContain("port=7001");
    expect(s.indexOf('cluster myid 2>/dev/null)" = "$p_id"')).toBeLessThan(s.indexOf("cluster forget"));
    expect(s.indexOf("cluster forget")).toBeLessThan(s.indexOf("cluster meet"));
    expect(s).toMatch(/THOSE SLOTS ARE LOST/);
    expect(s).not.toMatch(/-a |--pass/);
  });

  it.each([
    ["intervalSeconds", { intervalSeconds: 0 }],
    ["deadlineSeconds", { deadlineSeconds: 1.5 }],
    ["gateDeadlineSeconds", { gateDeadlineSeconds: -1 }],
    ["port", { port: 0 }],
  ])("names a bad %s", (name, o) => {
    expect(() => renderClusterRejoinScript(o)).toThrow(
      new RegExp(`cluster rejoin: ${name} must be a whole number >= 1`),
    );
  });
});
