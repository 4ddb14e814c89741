/** The heal step's second clock: when each restarted server's own log last said it was ready. */
import { describe, expect, it } from "vitest";
import { lastReadyStamp } from "../../apps/perf/scale-heal.js";

const local = (ms: number): number => new Date(2026, 11, 4, 11, 40, 53, ms).getTime();
const started = "4242:M 04 Dec 2026 11:40:52.001 * Server initialized";
const ready = (ms: string): string => `4242:M 04 Dec 2026 11:40:53.${ms} * Ready to accept connections tcp`;

describe("lastReadyStamp", () => {
  it.each([
    ["one ready line: its stamp, in local time", [started, ready("123")].join("\n"), local(123)],
    [
      "restarted in the same log: the last ready line",
      [ready("100"), "4300:M 04 Dec 2026 11:40:53.500 # Server restarted", ready("900")].join("\n"),
      local(900),
    ],
    ["no ready line (still loading): none", started, undefined],
    ["a ready line without a stamp: none", "Ready to accept connections tcp", undefined],
    ["a stamp that is no date: none", "4242:M 31 Foo 2026 11:40:53.123 * Ready to accept connections", undefined],
    ["empty log: none", "", undefined],
  ])("%s", (_what, text, want) => {
    expect(lastReadyStamp(text)).toBe(want);
  });
});
