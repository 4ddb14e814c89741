/**
 * Auto Mode under Pulumi mocks: the NodeClass carries no user-defined
 * `tags` (the managed cluster-role policies refuse them and no instance launches), and pulumi-eks
 * is told to install neither the CoreDNS nor the VPC CNI add-on (Auto Mode runs cluster DNS and
 * pod networking itself; the VPC CNI add-on would own the `amazon-vpc-cni` ConfigMap the program
 * creates), so no add-on pod lands on the built-in `system` pool. Without Auto Mode the managed
 * VPC CNI add-on with its network policy agent stays.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";

const recorder = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const { loadStackFile } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { autoModeSystemPods, pulumiEksAddons } = await import("../../components/aws/auto-mode.js");
const pulumi = await import("@pulumi/pulumi");

async function deploy(file: string, autoMode: boolean): Promise<void> {
  const { config } = loadStackFile(file);
  recorder.reset();
  runProgram({
    stack: "t",
    config: { ...config, eks: { ...config.eks, autoMode } },
    password: pulumi.secret("pw"),
    usePricingApi: false,
  });
  await settle();
}

beforeEach(() => recorder.reset());

describe.each(["stacks/Pulumi.cluster.yaml", "stacks/Pulumi.replication.yaml"])("%s in Auto Mode", (file) => {
  it("the Valkey NodeClass sets no user-defined tags", async () => {
    await deploy(file, true);
    const spec = recorder.get("kubernetes:eks.amazonaws.com/v1:NodeClass", "auto-mode-valkey-node-class").inputs
      .spec as Record<string, unknown>;
    expect(Object.keys(spec)).not.toContain("tags");
  });

  it("pulumi-eks installs neither CoreDNS nor the VPC CNI add-on, so no add-on pod needs the system pool", async () => {
    await deploy(file, true);
    const args = recorder.get("eks:index:Cluster", "eks-cluster").inputs as Parameters<typeof pulumiEksAddons>[0] & {
      vpcCniOptions?: unknown;
    };
    expect(args).toMatchObject({ useDefaultVpcCni: true, corednsAddonOptions: { enabled: false } });
    expect(args.vpcCniOptions).toBeUndefined();
    expect(pulumiEksAddons(args)).toEqual({ vpcCni: false, coredns: false, kubeProxy: false });
    expect(autoModeSystemPods(args)).toEqual([]);
    // The program's own ConfigMap turns network policy on.
    expect(recorder.get("kubernetes:core/v1:ConfigMap", "eks-network-policy").inputs).toMatchObject({
      metadata: { name: "amazon-vpc-cni" },
    });
  });
});

describe("without Auto Mode", () => {
  it("keeps the managed VPC CNI add-on with its network policy agent, and no CoreDNS add-on from pulumi-eks", async () => {
    await deploy("stacks/Pulumi.cluster.yaml", false);
    const args = recorder.get("eks:index:Cluster", "eks-cluster").inputs as Parameters<typeof pulumiEksAddons>[0];
    expect(args).toMatchObject({ useDefaultVpcCni: false, vpcCniOptions: { enableNetworkPolicy: true } });
    expect(pulumiEksAddons(args).vpcCni).toBe(true);
  });
});

describe("pulumi-eks v4.3.0's add-on decisions (nodejs/eks/cluster/cluster.ts)", () => {
  const auto = { autoMode: { enabled: true } };
  it("in Auto Mode: CoreDNS unless disabled, VPC CNI when useDefaultVpcCni is false, kube-proxy off", () => {
    expect(pulumiEksAddons({ ...auto, useDefaultVpcCni: false })).toEqual({
      vpcCni: true,
      coredns: true,
      kubeProxy: false,
    });
    expect(autoModeSystemPods({ ...auto, useDefaultVpcCni: false }).map((p) => p.name)).toEqual([
      "coredns-0",
      "coredns-1",
    ]);
  });
  it("without a default node group or Fargate: CoreDNS only when enabled explicitly; VPC CNI and kube-proxy by default", () => {
    expect(pulumiEksAddons({})).toEqual({ vpcCni: true, coredns: false, kubeProxy: true });
    expect(pulumiEksAddons({ corednsAddonOptions: { enabled: true } }).coredns).toBe(true);
    expect(autoModeSystemPods({ corednsAddonOptions: { enabled: true } })).toEqual([]);
  });
});
