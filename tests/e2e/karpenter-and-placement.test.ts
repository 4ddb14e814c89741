/**
 * Against a real local API server (see byo-stack.test.ts): Karpenter 1.14.1's own CRDs decide
 * whether the Valkey NodePool and EC2NodeClass the byo stack creates are valid (OpenAPI schema
 * and CEL rules run in the API server), and the real scheduler keeps the benchmark Job's pod off
 * every node that holds a Valkey pod.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as pulumik8s from "@pulumi/kubernetes";
import { describe, expect, it } from "vitest";
import { BenchmarkJob } from "../../components/benchmark-job.js";
import { KarpenterNodePool } from "../../components/karpenter-node-pool.js";
import { karpenterPlacement } from "../../stacks/platform.js";
import { parseStackConfig } from "../../config/schema.js";
import { sleep } from "../../core/util/poll-until.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { addValkeyPoolNode } from "./support/byo-config.js";
import { KWOK_STORAGE_CLASS } from "./support/control-plane.js";
import { applyCrds } from "./support/crds.js";
import { useE2eContext } from "./support/e2e-context.js";
import { createStack, tail } from "./support/pulumi-harness.js";
import { KARPENTER_CRD_DIR, requireInstalled } from "../support/toolchain.js";

/** Karpenter's CRDs from the Karpenter module at the chart version (.ci/toolchain/install.sh caches them). */
const CRD_DIR = KARPENTER_CRD_DIR;
const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-karp`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];

const ctx = useE2eContext(async (c) => {
  // Karpenter's own (karpenter.sh, karpenter.k8s.aws); the module's folder also has autoscaling.x-k8s.io's
  // CapacityBuffer.
  const dir = requireInstalled(CRD_DIR, "Karpenter's CRDs");
  await applyCrds(
    c.plane,
    readdirSync(dir)
      .filter((f) => f.startsWith("karpenter.") && f.endsWith(".yaml"))
      .map((f) => join(dir, f)),
  );
});

function karpenterByoConfig(namespace: string): Record<string, unknown> {
  return {
    platform: "byo",
    aws: { zones: ZONES },
    byo: {
      kubeconfig: ctx.plane.kubeconfigPath,
      manageKarpenterNodePool: true,
      karpenterNodeRole: "KarpenterNodeRole-e2e",
      karpenterDiscoveryTag: "e2e",
      storageClass: KWOK_STORAGE_CLASS,
    },
    valkey: {
      namespace,
      mode: "replication",
      resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "256Mi" } },
      persistence: { size: "1Gi" },
    },
    benchmark: { enabled: false },
    checks: { bootstrap: false, verify: false },
  };
}

/** A stack whose program is one component on a Kubernetes provider for the control plane (`build` creates it). */
function componentStack(build: (provider: pulumik8s.Provider) => void) {
  return createStack(
    ctx.env,
    {},
    {
      program: () => {
        build(new pulumik8s.Provider("e2e", { kubeconfig: ctx.plane.kubeconfig }));
        return Promise.resolve({});
      },
    },
  );
}

describe("Karpenter objects against Karpenter's real CRDs", () => {
  it("the byo stack's NodePool and EC2NodeClass pass the API server's validation (schema and CEL)", async () => {
    // With a managed NodePool no node runs two members (4 here): a fourth pool node, as Karpenter would launch
    // (tests/e2e/support/karpenter-decides.ts runs the real one).
    const fourth = "kwok-valkey-fourth";
    await addValkeyPoolNode(ctx.plane, fourth, ZONES[0]!);
    const s = await createStack(ctx.env, karpenterByoConfig("valkey-karpenter"), { password: PASSWORD });
    try {
      const up = await s.stack.up({ onOutput: (o) => s.log.push(o) });
      expect(up.summary.result, tail(s.log)).toBe("succeeded");
      const pool = (await ctx.custom.getClusterCustomObject({
        group: "karpenter.sh",
        version: "v1",
        plural: "nodepools",
        name: "valkey",
      })) as {
        spec: { template: { spec: { taints: unknown[]; requirements: { key: string }[] } } };
      };
      expect(pool.spec.template.spec.taints).toEqual([{ key: "workload", value: "valkey", effect: "NoSchedule" }]);
      expect(pool.spec.template.spec.requirements.map((r) => r.key)).toEqual(
        expect.arrayContaining(["kubernetes.io/arch", "karpenter.sh/capacity-type", "topology.kubernetes.io/zone"]),
      );
      const nodeClass = (await ctx.custom.getClusterCustomObject({
        group: "karpenter.k8s.aws",
        version: "v1",
        plural: "ec2nodeclasses",
        name: "valkey",
      })) as {
        spec: { role: string };
      };
      expect(nodeClass.spec.role).toBe("KarpenterNodeRole-e2e");
    } finally {
      await s.dispose();
      await ctx.plane.api("DELETE", `/api/v1/nodes/${fourth}`, undefined, { allow: [404] });
    }
  }, 300_000);

  it("an invalid NodePool is rejected by the API server's CEL rules, and its message surfaces in the up error", async () => {
    const { config } = parseStackConfig({ platform: "byo", byo: { kubeconfig: ctx.plane.kubeconfigPath } });
    const s = await componentStack((provider) => {
      new KarpenterNodePool(
        "bad-pool",
        {
          nodePool: config.karpenter.nodePool,
          zones: ZONES,
          nodeRoleName: "KarpenterNodeRole-e2e",
          discoveryTag: "e2e",
          name: "valkey-bad",
          // Our builder lets this through; Karpenter's CEL rule in the CRD does not.
          extraRequirements: [{ key: "karpenter.k8s.aws/instance-cpu", operator: "Gt", values: ["many"] }],
        },
        { provider },
      );
    });
    try {
      await expect(s.stack.up({ onOutput: (o) => s.log.push(o) })).rejects.toThrow(
        /requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value/,
      );
    } finally {
      await s.dispose();
    }
  }, 300_000);
});

describe("benchmark pod placement by the real scheduler", () => {
  it("the benchmark pod never lands on a node that holds a Valkey pod", async () => {
    const namespace = "valkey-placement";
    const valkey = await createStack(
      ctx.env,
      {
        ...karpenterByoConfig(namespace),
        byo: {
          kubeconfig: ctx.plane.kubeconfigPath,
          nodeSelector: { "karpenter.sh/nodepool": "valkey" },
          tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
          storageClass: KWOK_STORAGE_CLASS,
        },
      },
      { password: PASSWORD },
    );
    const extraNode = "kwok-valkey-extra";
    try {
      const up = await valkey.stack.up({ onOutput: (o) => valkey.log.push(o) });
      expect(up.summary.result, tail(valkey.log)).toBe("succeeded");
      // What Karpenter would do for a pod that fits nowhere: one more node in the Valkey pool.
      await addValkeyPoolNode(ctx.plane, extraNode, ZONES[0]!);
      const { config } = parseStackConfig(karpenterByoConfig(namespace));
      const job = await componentStack((provider) => {
        new BenchmarkJob(
          "bench",
          {
            namespace,
            image: config.valkey.image,
            mode: "replication",
            target: { host: `valkey-primary.${namespace}.svc.cluster.local` },
            workload: { ...SEED_WORKLOAD, requests: 1000 },
            secretName: "valkey-auth",
            placement: karpenterPlacement(config),
            resources: config.benchmark.resources,
          },
          { provider },
        );
      });
      try {
        const jobUp = await job.stack.up({ onOutput: (o) => job.log.push(o) });
        expect(jobUp.summary.result, tail(job.log)).toBe("succeeded");
        const deadline = Date.now() + 60_000;
        let benchNode: string | undefined;
        while (benchNode === undefined && Date.now() < deadline) {
          const pods = await ctx.core.listNamespacedPod({ namespace, labelSelector: "job-name" });
          benchNode = pods.items[0]?.spec?.nodeName;
          if (benchNode === undefined) await sleep(500);
        }
        const valkeyNodes = new Set(
          (await ctx.core.listNamespacedPod({ namespace, labelSelector: "valkey-on-eks/data-plane=true" })).items.map(
            (p) => p.spec?.nodeName,
          ),
        );
        expect(valkeyNodes.size).toBe(3);
        expect(benchNode).toBe(extraNode);
        expect(valkeyNodes.has(benchNode)).toBe(false);
      } finally {
        await job.dispose();
      }
    } finally {
      await valkey.dispose();
      await ctx.plane.api("DELETE", `/api/v1/nodes/${extraNode}`, undefined, { allow: [404] });
    }
  }, 400_000);
});
