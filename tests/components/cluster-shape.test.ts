/**
 * The ClusterShape guard: its Check refuses fewer primaries and another replica count (naming
 * the config key, both values and what to do instead), lets a first deployment, the same
 * shape and a scale-up through; the kit's generic `check` hook passes the inputs on unchanged;
 * the provider shell answers Check through the implementation; and ValkeyCluster's StatefulSet
 * depends on the guard (so a refusal stops `up` before the StatefulSet changes).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { installMocks, settle } from "../support/pulumi-mocks.js";
import { dynamicProtocol } from "../../components/steps/kit/protocol.js";
import { rerun, wholeNumber } from "../../components/steps/kit/inputs.js";
import { declareStep } from "../../components/steps/kit/step.js";
import { refuseShapeChange, check, update } from "../../components/steps/cluster-shape/implementation.js";
import { tsModuleProvider } from "../../components/steps/kit/ts-module-provider.js";
import { PLACEMENT, valkeyConfig } from "../support/valkey-fixtures.js";

const mocks = installMocks();
const { ValkeyCluster } = await import("../../components/valkey-cluster.js");

const shape = (primaries: number, replicasPerPrimary: number) => ({
  primaries,
  replicasPerPrimary,
  __provider: "serialized",
});

describe("ClusterShape refusals", () => {
  it("refuses fewer primaries, naming valkey.cluster.primaries, both values and what to do instead", () => {
    const f = refuseShapeChange(shape(4, 1), shape(3, 1));
    expect(f).toHaveLength(1);
    expect(f[0]?.property).toBe("primaries");
    expect(f[0]?.reason).toMatch(/^valkey\.cluster\.primaries: lowering it from 4 to 3 is refused/);
    expect(f[0]?.reason).toContain("keep valkey.cluster.primaries at 4");
    expect(f[0]?.reason).toContain("while checks.bootstrap is false");
    expect(f[0]?.reason).toContain("deploy a new release with 3 primaries");
  });

  it("refuses another replicas-per-primary, up or down, naming valkey.cluster.replicasPerPrimary", () => {
    for (const m of [0, 2]) {
      const f = refuseShapeChange(shape(3, 1), shape(3, m));
      expect(f.map((x) => x.property)).toEqual(["replicasPerPrimary"]);
      expect(f[0]?.reason).toMatch(
        new RegExp(
          `^valkey\\.cluster\\.replicasPerPrimary: changing it from 1 to ${m} on a running cluster is refused`,
        ),
      );
      expect(f[0]?.reason).toContain("Keep valkey.cluster.replicasPerPrimary at 1");
    }
    expect(refuseShapeChange(shape(4, 1), shape(3, 2)).map((x) => x.property)).toEqual([
      "primaries",
      "replicasPerPrimary",
    ]);
  });

  it("lets fewer primaries through when a ClusterScaleIn step runs first (scaleIn: true), never another replica count", () => {
    expect(refuseShapeChange(shape(6, 1), { ...shape(3, 1), scaleIn: true })).toEqual([]);
    expect(refuseShapeChange(shape(4, 1), { ...shape(3, 2), scaleIn: true }).map((x) => x.property)).toEqual([
      "replicasPerPrimary",
    ]);
  });

  it("lets a first deployment, the same shape and a scale-up of primaries through", () => {
    expect(refuseShapeChange({}, shape(3, 1))).toEqual([]);
    expect(refuseShapeChange(shape(3, 1), shape(3, 1))).toEqual([]);
    expect(refuseShapeChange(shape(3, 1), shape(5, 1))).toEqual([]);
  });

  it("the protocol's check returns the new inputs unchanged with the refusals; update refuses too", async () => {
    const news = shape(3, 1);
    expect(check(shape(4, 1), news)).toEqual({ inputs: news, failures: refuseShapeChange(shape(4, 1), news) });
    expect(check(shape(3, 1), shape(4, 1))).toEqual({ inputs: shape(4, 1), failures: [] });
    await expect(update("4x1", shape(4, 1), shape(3, 1))).rejects.toThrow(
      /valkey\.cluster\.primaries: lowering it from 4 to 3/,
    );
    expect((await update("3x1", shape(3, 1), shape(4, 1))).outs).toMatchObject({
      primaries: 4,
      replicasPerPrimary: 1,
      pods: 8,
    });
  });

  it("a step without a check hook passes every input (the hook is generic)", () => {
    const step = declareStep({ type: "Plain", fields: { n: rerun(wholeNumber()) }, outputs: {} });
    const { check: plain } = dynamicProtocol(step, { run: () => Promise.resolve({}), idOf: () => "x" });
    expect(plain({ n: 2 }, { n: 1 })).toEqual({ inputs: { n: 1 }, failures: [] });
  });

  it("the provider shell answers Check through the implementation module", async () => {
    const provider = tsModuleProvider(
      fileURLToPath(new URL("../../components/steps/cluster-shape/implementation.ts", import.meta.url)),
    );
    const refused = await provider.check?.(shape(4, 1), shape(3, 1));
    expect(refused?.failures?.map((f) => f.property)).toEqual(["primaries"]);
    expect((await provider.check?.(shape(3, 1), shape(4, 1)))?.failures).toEqual([]);
  });
});

describe("ValkeyCluster waits for its shape guard", () => {
  it("creates the guard with the config's shape and the StatefulSet depends on it", async () => {
    new ValkeyCluster("vc", {
      namespace: "data",
      valkey: valkeyConfig({ mode: "cluster", cluster: { primaries: 4, replicasPerPrimary: 1, nodeTimeoutMs: 12000 } }),
      placement: PLACEMENT,
      password: "pw",
    });
    await settle();
    expect(mocks.get("valkey-on-eks:steps:ClusterShape", "vc-shape").parent).toBe("vc");
    const guard = mocks.get("pulumi-nodejs:dynamic:Resource", "vc-shape-run");
    expect(guard.parent).toBe("vc-shape");
    expect(guard.inputs).toMatchObject({ primaries: 4, replicasPerPrimary: 1 });
    const sts = mocks.resources.find((r) => r.name === "vc-members");
    expect(sts?.dependsOn).toContain("vc-shape-run");
    expect(mocks.resources.find((r) => r.name === "vc-scale-in")).toBeUndefined();
  });

  it("with scaleIn access, a ClusterScaleIn step follows the guard and the StatefulSet waits for it", async () => {
    new ValkeyCluster("vs", {
      namespace: "data",
      valkey: valkeyConfig({ mode: "cluster", cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 12000 } }),
      placement: PLACEMENT,
      password: "pw",
      scaleIn: { kubeconfig: "kc", connector: "direct" },
    });
    await settle();
    expect(mocks.get("pulumi-nodejs:dynamic:Resource", "vs-shape-run").inputs).toMatchObject({
      primaries: 3,
      scaleIn: true,
    });
    expect(mocks.get("valkey-on-eks:steps:ClusterScaleIn", "vs-scale-in").parent).toBe("vs");
    const step = mocks.get("pulumi-nodejs:dynamic:Resource", "vs-scale-in-run");
    expect(step.inputs).toMatchObject({ namespace: "data", primaries: 3, replicasPerPrimary: 1, connector: "direct" });
    expect(String(step.inputs.selector)).toContain("app.kubernetes.io/instance=");
    expect(mocks.resources.find((r) => r.name === "vs-scale-in")?.dependsOn).toContain("vs-shape-run");
    expect(mocks.resources.find((r) => r.name === "vs-members")?.dependsOn).toEqual(
      expect.arrayContaining(["vs-shape-run", "vs-scale-in-run"]),
    );
  });
});
