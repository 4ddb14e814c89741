/**
 * heal.sh's set of proven peers (pod/scripts/lib-proven.sh), run by the system's sh as heal.sh includes it: which
 * proofs `is_proven` finds, and what `forget` leaves (every proof of that peer gone, the others kept in order).
 */
import { describe, expect, it } from "vitest";
import { shellFile } from "../../pod/shell-file.js";
import { shQuote } from "../../pod/sh-cli.js";
import { run } from "../support/valkey-fixtures.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const AB = `${"a".repeat(39)}b`;
const SET = [`${A} 10.0.0.1 6379`, `${B} 10.0.0.2 6379`, `${A} 10.0.0.9 6379`, `${AB} 10.0.0.3 6379`];

/** `proven` set to `lines`, then `commands` (their stdout), then the set after them. */
async function withSet(lines: string[], commands: string[]): Promise<{ said: string[]; set: string[] }> {
  const text = [
    "nl='\n'",
    shellFile("lib-proven.sh").replace(/^#!.*\n/, ""),
    `proven=${shQuote(lines.map((l) => `${l}\n`).join(""))}`,
    ...commands,
    `printf -- '--\n%s' "$proven"`,
  ].join("\n");
  const { stdout } = await run("sh", ["-c", text]);
  const [said, set] = stdout.split("--\n") as [string, string];
  const nonEmpty = (t: string): string[] => t.split("\n").filter((l) => l !== "");
  return { said: nonEmpty(said), set: nonEmpty(set) };
}

describe("lib-proven.sh: heal.sh's proofs of its peers", () => {
  it.each([
    { case: "forget drops every address of that peer, keeps the rest in order", forget: A, want: [SET[1], SET[3]] },
    { case: "forget of a peer with no proof changes nothing", forget: "c".repeat(40), want: SET },
    {
      case: "an ID another ID starts with is a different peer",
      forget: AB,
      want: [SET[0], SET[1], SET[2]],
    },
    { case: "forget of the last one leaves an empty set", forget: B, set: [SET[1] as string], want: [] },
  ])("$case", async ({ forget, want, set }) => {
    expect((await withSet(set ?? SET, [`forget ${forget}`])).set).toEqual(want);
  });

  it("is_proven: that peer at that address and port only", async () => {
    const asked = [
      `${A} 10.0.0.1 6379`,
      `${A} 10.0.0.9 6379`,
      `${A} 10.0.0.1 6380`,
      `${A} 10.0.0.2 6379`,
      `${AB} 10.0.0.1 6379`,
      `${B} 10.0.0.2 6379`,
    ];
    const r = await withSet(
      SET,
      asked.map((a) => `if is_proven ${a}; then echo yes; else echo no; fi`),
    );
    expect(r.said).toEqual(["yes", "yes", "no", "no", "no", "yes"]);
    expect(r.set).toEqual(SET);
  });
});
