/**
 * The pairing of CLUSTER MYID answers with their asks (pod/scripts/myid-answers.awk, heal.sh's answers_awk), run
 * with the system's awk on what one valkey-cli prints for a batch: an answer counts only between its own marker and
 * the one before it, so a reply is never credited to another ask; `finished` says how far the call got and `stuck`
 * which ask it stopped at.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellFile } from "../../pod/shell-file.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const ASKS = [`${A} 10.0.0.1 6379 m-0`, `${B} 10.0.0.2 6379 m-1`, `${C} 10.0.0.3 6379 m-2`];

function pair(output: string[], asks = ASKS): string[] {
  const input = [...asks, "--", ...output].join("\n") + "\n";
  return execFileSync("awk", [shellFile("myid-answers.awk")], { input, encoding: "utf8" })
    .trim()
    .split("\n");
}

describe("myid-answers.awk: CLUSTER MYID answers paired with their asks by the local server's markers", () => {
  it.each([
    {
      case: "every peer answered with its own ID",
      output: [A, "heal-ask-1", B, "heal-ask-2", C, "heal-ask-3"],
      want: [`ok ${ASKS[0]}`, `ok ${ASKS[1]}`, `ok ${ASKS[2]}`, "finished 3"],
    },
    {
      case: "a refused peer prints nothing before its marker: not proven, the rest still are",
      output: [A, "heal-ask-1", "heal-ask-2", C, "heal-ask-3"],
      want: [`ok ${ASKS[0]}`, `no ${ASKS[1]}`, `ok ${ASKS[2]}`, "finished 3"],
    },
    {
      case: "another node at the address: no, with what it said",
      output: [A, "heal-ask-1", C, "heal-ask-2", C, "heal-ask-3"],
      want: [`ok ${ASKS[0]}`, `no ${ASKS[1]} ${C}`, `ok ${ASKS[2]}`, "finished 3"],
    },
    {
      case: "the call cut short at the second ask (it hung): finished 1, stuck at the second, nothing said of the rest",
      output: [A, "heal-ask-1", B],
      want: [`ok ${ASKS[0]}`, "finished 1", `stuck ${B}`],
    },
    {
      case: "a marker lost (the local server missed one): two replies before the next marker prove neither, name none",
      output: [A, "heal-ask-1", B, C, "heal-ask-3"],
      want: [`ok ${ASKS[0]}`, `no ${ASKS[1]}`, `no ${ASKS[2]}`, "finished 3"],
    },
    {
      case: "an error reply is not an ID; a marker repeated or past the asks is ignored",
      output: ["NOAUTH Authentication required.", "heal-ask-1", "heal-ask-1", B, "heal-ask-2", "heal-ask-9"],
      want: [`no ${ASKS[0]} NOAUTH Authentication required.`, `ok ${ASKS[1]}`, "finished 2", `stuck ${C}`],
    },
    { case: "nothing printed at all: stuck at the first ask", output: [], want: ["finished 0", `stuck ${A}`] },
    { case: "no asks, nothing printed", output: [], asks: [], want: ["finished 0"] },
  ])("$case", ({ output, want, asks }) => {
    expect(pair(output, asks)).toEqual(want);
  });
});
