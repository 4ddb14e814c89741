import { join } from "node:path";
import type { TestSpecification } from "vitest/node";
import { describe, expect, it } from "vitest";
import LastFilesSequencer, { LAST_FILES } from "./last-files-sequencer.js";

const ROOT = join(import.meta.dirname, "../..");
const PODS = ["tests/pods/byo-stack.test.ts", "tests/pods/kube-local.test.ts", "tests/pods/images-check.test.ts"];

/** Specifications of one project as vitest's sequencer reads them, with cached durations (ms) when given. */
function sequencer(durations: Record<string, number>): {
  sort: (files: string[]) => Promise<string[]>;
} {
  const specs = (files: string[]) =>
    files.map(
      (f) =>
        ({
          moduleId: join(ROOT, f),
          project: { name: "pods", config: { sequence: { groupOrder: 0 }, isolate: true } },
        }) as unknown as TestSpecification,
    );
  const ctx = {
    cache: {
      getTestSpecificationResult: (s: TestSpecification) => {
        const d = durations[s.moduleId.slice(ROOT.length + 1)];
        return d === undefined ? undefined : { failed: false, duration: d };
      },
    },
  };
  const seq = new LastFilesSequencer(ctx as unknown as ConstructorParameters<typeof LastFilesSequencer>[0]);
  return { sort: async (files) => (await seq.sort(specs(files))).map((s) => s.moduleId.slice(ROOT.length + 1)) };
}

describe("the test sequencer", () => {
  it("runs kube:local's test after every other pods file, where vitest would run it earlier", async () => {
    expect(LAST_FILES).toEqual(["tests/pods/kube-local.test.ts"]);
    // Longest first from cached results: kube-local's 900 s would put it first.
    const cached = {
      "tests/pods/byo-stack.test.ts": 600,
      "tests/pods/kube-local.test.ts": 900,
      "tests/pods/images-check.test.ts": 300,
    };
    expect(await sequencer(cached).sort(PODS)).toEqual([
      "tests/pods/byo-stack.test.ts",
      "tests/pods/images-check.test.ts",
      "tests/pods/kube-local.test.ts",
    ]);
    // Without results, by size: the others keep vitest's order.
    const bySize = await sequencer({}).sort(PODS);
    expect(bySize.at(-1)).toBe("tests/pods/kube-local.test.ts");
    expect(bySize.slice(0, 2)).toEqual(["tests/pods/byo-stack.test.ts", "tests/pods/images-check.test.ts"]);
  });
});
