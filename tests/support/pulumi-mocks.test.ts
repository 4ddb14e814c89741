/**
 * settle() (tests/support/pulumi-mocks.ts) waits on the mock monitor's unanswered requests, not on
 * a length of time: a resource registered late, in an apply() after a slow invoke, is seen, and a
 * registration the test holds back does not keep it waiting.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { installMocks, settle } from "./pulumi-mocks.js";

/** How long the mocked invoke takes to answer: longer than any fixed number of event-loop turns. */
const SLOW_INVOKE_MS = 150;
const LOOKUP = "test:index:lookup";

const recorder = installMocks({
  invokes: {
    // MockMonitor.invoke awaits what the mock's call returns, so a Promise answers late.
    [LOOKUP]: (inputs) =>
      new Promise((resolve) =>
        setTimeout(() => resolve({ answer: `${String(inputs.q)}!` }), SLOW_INVOKE_MS),
      ) as unknown as Record<string, unknown>,
  },
});

class Thing extends pulumi.CustomResource {
  declare readonly value: pulumi.Output<string>;
  constructor(name: string, value: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions) {
    super("test:index:Thing", name, { value }, opts);
  }
}

async function lookup(q: string): Promise<string> {
  const result = (await pulumi.runtime.invoke(LOOKUP, { q })) as { answer: string };
  return result.answer;
}

const names = () => recorder.resources.map((r) => r.name);
/** What settle() did before: a fixed number of event-loop turns. */
const fixedTurns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("settle()", () => {
  it("sees resources registered in apply() callbacks after slow invokes, two levels deep", async () => {
    recorder.reset();
    const a = new Thing("a", "x");
    a.value.apply(async (v) => {
      const b = new Thing("b", await lookup(v));
      b.value.apply(async (w) => new Thing("c", await lookup(w)));
    });
    // The late registrations really are late: a fixed wait of event-loop turns does not see them.
    await fixedTurns(5);
    expect(names()).toEqual(["a"]);
    await settle();
    expect(names()).toEqual(["a", "b", "c"]);
    expect(recorder.get("test:index:Thing", "c").inputs.value).toBe("x!!");
    expect(recorder.calls).toEqual([LOOKUP, LOOKUP]);
  });

  it("returns while a registration waits on a dependsOn the test holds back, and sees it once released", async () => {
    recorder.reset();
    let open: (deps: pulumi.Resource[]) => void = () => {};
    const gate = new Promise<pulumi.Resource[]>((resolve) => (open = resolve));
    new Thing("free", "f");
    new Thing("gated", "g", { dependsOn: gate });
    await settle();
    expect(names()).toEqual(["free"]);
    open([]);
    await settle();
    expect(names()).toEqual(["free", "gated"]);
  });
});
