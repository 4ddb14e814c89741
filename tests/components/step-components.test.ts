/**
 * Every post-deploy step's component (components/steps/<step>/component.ts, built by the kit's
 * defineStep), found by listing the folder, under Pulumi mocks: one shape (a component
 * `valkey-on-eks:steps:<type>` with one child dynamic resource `${name}-run`), every declared
 * output (and `runStamp`) set on the component from the child's, and the aliases that keep the
 * URNs an existing stack got from the shapes before (a component `valkey-on-eks:checks:<type>`
 * over `${name}-run`, or one dynamic resource `pulumi-nodejs:dynamic/<module>:<type>`).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type * as pulumi from "@pulumi/pulumi";
import type { StepDeclaration } from "../../components/steps/kit/step.js";
import { installMocks, settle, valueOf, type MockRecorder } from "../support/pulumi-mocks.js";

const STEPS_DIR = fileURLToPath(new URL("../../components/steps/", import.meta.url));
const RUN = "pulumi-nodejs:dynamic:Resource";

type StepClass = (new (
  name: string,
  args: never,
  opts?: pulumi.ComponentResourceOptions,
) => pulumi.ComponentResource) & {
  step: StepDeclaration;
};

/** The URNs the steps had before defineStep (git 1c0b312), per step type. */
const FORMER: Record<string, (urn: (chain: string, name: string) => string, name: string) => string[]> = {
  ClusterBootstrap: (urn, n) => [
    urn("valkey-on-eks:checks:ClusterBootstrap", n),
    urn(`valkey-on-eks:checks:ClusterBootstrap$${RUN}`, `${n}-run`),
  ],
  TopologyCheck: (urn, n) => [
    urn("valkey-on-eks:checks:TopologyCheck", n),
    urn(`valkey-on-eks:checks:TopologyCheck$${RUN}`, `${n}-run`),
  ],
  FailureDrill: (urn, n) => [
    urn("valkey-on-eks:checks:FailureDrill", n),
    urn(`valkey-on-eks:checks:FailureDrill$${RUN}`, `${n}-run`),
  ],
  ClusterShape: (urn, n) => [urn("pulumi-nodejs:dynamic/checks:ClusterShape", n)],
  BenchmarkResults: (urn, n) => [urn("pulumi-nodejs:dynamic/benchmark:BenchmarkResults", n)],
  VolumeRelease: (urn, n) => [urn("pulumi-nodejs:dynamic/storage:VolumeRelease", n)],
  RollingRestart: () => [],
  LiveConfig: () => [],
  ClusterScaleIn: () => [],
  RestoreCheck: () => [],
  AddonPins: () => [],
};

let mocks: MockRecorder;
let pulumiRt: typeof pulumi;
const steps: [string, StepClass][] = [];
/** The aliases each registration carried, by `type\0name`: URNs, or `spec:<type>` for a type alias. */
const aliases = new Map<string, string[]>();

interface AliasProto {
  getUrn(): string;
  getSpec(): { getType(): string; getName(): string } | undefined;
}

beforeAll(async () => {
  mocks = installMocks({
    // A provider that answers every step's declared outputs (and runStamp), each its own value:
    // the component shows only those its child registered a placeholder for.
    outputs: (r) =>
      r.type === RUN
        ? Object.fromEntries(["runStamp", ...steps.flatMap(([, s]) => s.step.outputKeys)].map((k) => [k, `out:${k}`]))
        : {},
  });
  pulumiRt = await import("@pulumi/pulumi");
  const monitor = pulumiRt.runtime.getMonitor() as unknown as {
    registerResource: (req: never, cb: unknown) => unknown;
  };
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (
    req: { getType(): string; getName(): string; getAliasesList(): AliasProto[] },
    cb: unknown,
  ) => {
    const list = req
      .getAliasesList()
      .map((a) => (a.getSpec()?.getType() ? `spec:${a.getSpec()?.getType()}` : a.getUrn()));
    aliases.set(`${req.getType()}\0${req.getName()}`, list);
    return original(req as never, cb);
  };
  for (const dir of readdirSync(STEPS_DIR, { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === "kit") continue;
    const mod = (await import(`../../components/steps/${dir.name}/component.ts`)) as Record<string, unknown>;
    for (const v of Object.values(mod))
      if (typeof v === "function" && "step" in v) steps.push([dir.name, v as StepClass]);
  }
});

describe("every step component (defineStep)", () => {
  it("finds one step component in each step folder", () => {
    const folders = readdirSync(STEPS_DIR, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== "kit");
    expect(steps.map(([dir]) => dir).sort()).toEqual(folders.map((d) => d.name).sort());
    expect(steps.map(([dir]) => dir)).toEqual(
      expect.arrayContaining([
        "benchmark-results",
        "cluster-bootstrap",
        "cluster-shape",
        "failure-drill",
        "topology-check",
        "volume-release",
      ]),
    );
  });

  it("is a component valkey-on-eks:steps:<type> over `${name}-run`, and sets every declared output and runStamp", async () => {
    for (const [dir, Step] of steps) {
      // The mocks run no provider: the args are not parsed, only passed through.
      const c = new Step(`s-${dir}`, {} as never) as pulumi.ComponentResource & Record<string, pulumi.Output<unknown>>;
      await settle();
      expect(mocks.get(`valkey-on-eks:steps:${Step.step.type}`, `s-${dir}`).parent).toBeUndefined();
      expect(mocks.get(RUN, `s-${dir}-run`).parent).toBe(`s-${dir}`);
      for (const key of [...Step.step.outputKeys, "runStamp"]) {
        expect(c[key], `${dir}: ${key} is declared but not set on the component`).toBeDefined();
        expect(await valueOf(c[key]!), `${dir}: ${key}`).toBe(`out:${key}`);
      }
    }
  });

  it("passes every input through to the run, also one that is an output too (BenchmarkResults' image)", async () => {
    for (const [dir, Step] of steps) {
      const given = Object.fromEntries(Object.keys(Step.step.fields).map((k) => [k, `in:${k}`]));
      new Step(`i-${dir}`, given as never);
      await settle();
      const inputs = mocks.get(RUN, `i-${dir}-run`).inputs;
      for (const key of Object.keys(Step.step.fields)) {
        // Secrets arrive wrapped; `triggers` is computed from `after`.
        if (Step.step.secretKeys.includes(key) || key === "triggers") continue;
        expect(inputs[key], `${dir}: input ${key}`).toBe(`in:${key}`);
      }
    }
    expect(steps.some(([, Step]) => Step.step.outputKeys.some((k) => k in Step.step.fields))).toBe(true);
  });

  it("keeps the URNs existing stacks have (aliases to the former type and shape)", async () => {
    const parent = new pulumiRt.ComponentResource("test:index:Parent", "p");
    const chain = (type: string) =>
      `urn:pulumi:${pulumiRt.getStack()}::${pulumiRt.getProject()}::test:index:Parent$${type}`;
    for (const [dir, Step] of steps) {
      for (const under of [undefined, parent]) {
        const name = `a-${dir}${under ? "-under" : ""}`;
        new Step(name, {} as never, { parent: under });
        await settle();
        const urn = (type: string, n: string) =>
          under ? `${chain(type)}::${n}` : `urn:pulumi:${pulumiRt.getStack()}::${pulumiRt.getProject()}::${type}::${n}`;
        const former = FORMER[Step.step.type]?.(urn, name);
        expect(former, `${dir}: no former URNs listed`).toBeDefined();
        const component = aliases.get(`valkey-on-eks:steps:${Step.step.type}\0${name}`);
        const run = aliases.get(`${RUN}\0${name}-run`);
        if (former!.length === 2) {
          expect(component, dir).toEqual([`spec:valkey-on-eks:checks:${Step.step.type}`]);
          expect(run, dir).toEqual([former![1]]);
        } else {
          expect(component, dir).toEqual([]);
          expect(run, dir).toEqual(former);
        }
      }
    }
  });
});
