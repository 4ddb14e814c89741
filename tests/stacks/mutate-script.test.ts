/** The mutation script's pure parts (tests/support/mutate.ts): which mutants it makes and how it samples them. */
import { describe, expect, it } from "vitest";
import { mutants, spread } from "../support/mutate.js";

describe("npm run mutate", () => {
  it("makes one mutant per operator site, on code lines only", () => {
    const source = ["import { x } from 'y';", "// a > b", "const ok = a >= b && c === d;", "type T = A | B;"].join(
      "\n",
    );
    expect(mutants(source).map((m) => [m.line, m.after])).toEqual([
      [3, "const ok = a > b && c === d;"],
      [3, "const ok = a >= b && c !== d;"],
      [3, "const ok = a >= b || c === d;"],
    ]);
    // The mutant is the whole file with that one line changed.
    expect(mutants(source)[0]!.source.split("\n")).toEqual([
      "import { x } from 'y';",
      "// a > b",
      "const ok = a > b && c === d;",
      "type T = A | B;",
    ]);
  });

  it("spreads a sample evenly, and takes all when asked for 0 or more than there are", () => {
    expect(spread([1, 2, 3, 4, 5, 6], 3)).toEqual([1, 3, 5]);
    expect(spread([1, 2], 0)).toEqual([1, 2]);
    expect(spread([1, 2], 5)).toEqual([1, 2]);
  });
});
