/**
 * EksCluster against today's EKS: the default
 * version and standard-support upgrade policy, VPC CNI network-policy enforcement, the node role's
 * managed policies, and what the add-ons must outlive on destroy. Under Pulumi mocks.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { recordDependencies } from "../support/dependency-recorder.js";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";
import { defaultClusterArgs, deployEksCluster } from "../support/eks-fixtures.js";

const mocks = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const deps = recordDependencies(mocks);
const pulumi = await import("@pulumi/pulumi");
const { runProgram } = await import("../../stacks/program.js");
const { loadStackFile } = await import("../../config/schema.js");

async function deploy(raw: Record<string, unknown> = {}) {
  const { config } = parseStackConfig({ "aws:region": "us-west-2", ...raw });
  return deployEksCluster(mocks, { aws: config.aws, eks: config.eks });
}

describe("EKS version and support policy", () => {
  it("defaults to versions.env EKS_VERSION on standard support", async () => {
    await deploy();
    const cluster = mocks.get("eks:index:Cluster", "eks-cluster");
    expect(cluster.inputs.version).toBe(versions.EKS_VERSION);
    expect(cluster.inputs.upgradePolicy).toEqual({ supportType: "STANDARD" });
  });

  it("takes eks.supportType EXTENDED when asked, and names the key on a bad value", async () => {
    await deploy({ eks: { supportType: "EXTENDED" } });
    expect(mocks.get("eks:index:Cluster", "eks-cluster").inputs.upgradePolicy).toEqual({ supportType: "EXTENDED" });
    expect(() => parseStackConfig({ "aws:region": "us-west-2", "eks": { supportType: "standard" } })).toThrow(
      /eks\.supportType/,
    );
  });

  it("does not set nodeAssociatePublicIpAddress (it has no effect on managed node groups)", () => {
    const args = defaultClusterArgs();
    expect(Object.keys(args)).not.toContain("nodeAssociatePublicIpAddress");
  });
});

describe("destroy order: volumes before the EBS CSI driver", () => {
  // The engine deletes dependents first: the Valkey namespace (and with it the PVCs; the
  // Kubernetes provider waits until the namespace is gone) and the StatefulSets go before the
  // EBS CSI add-on and the gp3 StorageClass, so the driver is still there to delete the volumes.
  it("the Valkey namespace and release depend on the EBS CSI add-on and the gp3 StorageClass", async () => {
    mocks.reset();
    deps.reset();
    runProgram({
      stack: "cluster",
      config: loadStackFile("stacks/Pulumi.cluster.yaml").config,
      password: pulumi.secret("pw"),
    });
    await settle();
    for (const dependent of ["valkey-namespace", "valkey-cluster"]) {
      expect(deps.dependsOn(dependent, "eks-ebs-csi"), `${dependent}: ${deps.of(dependent).join(", ")}`).toBe(true);
      expect(deps.dependsOn(dependent, "eks-gp3"), `${dependent}: ${deps.of(dependent).join(", ")}`).toBe(true);
    }
    expect(deps.parentOf("valkey-cluster-members")).toBe("valkey-cluster");
  });
});
