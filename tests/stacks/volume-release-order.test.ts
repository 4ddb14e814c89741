/**
 * Destroy order of the volumes ("PVCs are deleted and their volumes released before
 * the EBS CSI add-on goes"), under Pulumi mocks: the program's VolumeRelease guard sits between
 * the Valkey release and the platform in the dependency graph. The engine deletes a resource
 * before everything it depends on, so "A depends on B" reads "B outlives A on destroy":
 * Valkey → VolumeRelease (deletes the PVCs, waits for their PVs) → namespace → EBS CSI add-on,
 * node groups, Karpenter.
 */
import { describe, expect, it } from "vitest";
import { recordDependencies } from "../support/dependency-recorder.js";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";

const mocks = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const deps = recordDependencies(mocks);
const pulumi = await import("@pulumi/pulumi");
const { runProgram } = await import("../../stacks/program.js");
const { loadStackFile } = await import("../../config/schema.js");

/** The step's dynamic resource (the child of the VolumeRelease component `valkey-volume-release`). */
const GUARD = "valkey-volume-release-run";

async function run(config: ReturnType<typeof loadStackFile>["config"]): Promise<void> {
  mocks.reset();
  runProgram({ stack: "t", config, password: pulumi.secret("pw"), usePricingApi: false });
  await settle();
}

const guard = () => mocks.resources.find((r) => r.name === GUARD);
const explain = (name: string): string => `${name} depends on: ${deps.of(name).join(", ")}`;

describe("VolumeRelease in the destroy order", () => {
  it("cluster stack on EKS: the release depends on the guard; the guard on the namespace, the EBS CSI add-on, the system nodes and Karpenter", async () => {
    await run(loadStackFile("stacks/Pulumi.cluster.yaml").config);
    expect(guard()?.type).toBe("pulumi-nodejs:dynamic:Resource");
    expect(mocks.get("valkey-on-eks:steps:VolumeRelease", "valkey-volume-release").parent).toBeUndefined();
    // Deleted after the Valkey release: the release (and so its StatefulSet, a child) depends on it.
    expect(deps.dependsOn("valkey-cluster", GUARD), explain("valkey-cluster")).toBe(true);
    expect(deps.parentOf("valkey-cluster-members")).toBe("valkey-cluster");
    // Deleted before what the CSI driver needs to delete the disks.
    // Karpenter's controller (Helm release) and the Valkey NodePool: the nodes the pods and volumes are on.
    for (const outlives of [
      "valkey-namespace",
      "eks-ebs-csi",
      "eks-system",
      "eks-gp3",
      "eks-pod-identity-agent",
      "karpenter-controller",
      "karpenter-valkey-node-pool",
    ]) {
      expect(deps.dependsOn(GUARD, outlives), explain(GUARD)).toBe(true);
    }
    // The guard records the namespace and the release's selector; the kubeconfig is a secret input.
    const inputs = guard()?.inputs as Record<string, unknown>;
    expect(inputs.namespace).toBe("valkey");
    expect(inputs.selector).toBe("app.kubernetes.io/instance=valkey-cluster,app.kubernetes.io/part-of=valkey-on-eks");
    expect(JSON.stringify(guard()?.redacted)).not.toContain("clusters");
  });

  it("replication stack: the replication release (members and Sentinels) depends on the guard, whose selector spans both", async () => {
    await run(loadStackFile("stacks/Pulumi.replication.yaml").config);
    expect(deps.dependsOn("valkey", GUARD), explain("valkey")).toBe(true);
    expect(deps.dependsOn(GUARD, "eks-ebs-csi"), explain(GUARD)).toBe(true);
    expect((guard()?.inputs as Record<string, unknown>).selector).toBe(
      "app.kubernetes.io/instance=valkey,app.kubernetes.io/part-of=valkey-on-eks",
    );
  });

  it("EKS Auto Mode: the guard outlives the release and goes before the Valkey NodePool and the StorageClass", async () => {
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    await run({ ...config, eks: { ...config.eks, autoMode: true } });
    expect(deps.dependsOn("valkey-cluster", GUARD), explain("valkey-cluster")).toBe(true);
    expect(deps.dependsOn(GUARD, "eks-gp3"), explain(GUARD)).toBe(true);
    expect(
      deps.of(GUARD).some((d) => d.startsWith("auto-mode-valkey")),
      explain(GUARD),
    ).toBe(true);
  });
});
