/**
 * The byo preflight's checks (components/capacity/byo-preflight.ts) on a cluster's facts, one
 * wrong stack file (or cluster) per check: each refused naming its key, the right one passing.
 * The facts read from a real API server are tests/e2e/control-plane.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { checkByoCluster, type ByoClusterFacts, type ByoNode } from "../../components/capacity/byo-preflight.js";

const POOL = { "karpenter.sh/nodepool": "valkey" };
const TAINT = { key: "workload", value: "valkey", effect: "NoSchedule" };
const node = (name: string, zone: string, extra: Partial<ByoNode> = {}): ByoNode => ({
  name,
  labels: { "topology.kubernetes.io/zone": zone, ...POOL },
  taints: [TAINT],
  unschedulable: false,
  allocatable: { cpuMillicores: 8000, memoryBytes: 64 * 2 ** 30 },
  ...extra,
});
const CILIUM = { name: "kube-system/cilium", containers: [{ name: "cilium-agent", args: [] }] };
const facts = (over: Partial<ByoClusterFacts> = {}): ByoClusterFacts => ({
  nodes: [
    node("a1", "us-west-2a"),
    node("b1", "us-west-2b"),
    node("c1", "us-west-2c"),
    node("sys", "us-west-2a", { labels: {}, taints: [] }),
  ],
  storageClasses: [
    { name: "gp3", isDefault: true },
    { name: "fast", isDefault: false },
  ],
  daemonSets: [CILIUM],
  ...over,
});
const config = (byo: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) =>
  parseStackConfig({
    platform: "byo",
    aws: { zones: ["us-west-2a", "us-west-2b", "us-west-2c"] },
    byo: {
      nodeSelector: POOL,
      tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
      ...byo,
    },
    ...rest,
  }).config;

describe("byo preflight", () => {
  it("passes the right stack file on a cluster that has what it needs", () => {
    expect(checkByoCluster(config(), facts())).toEqual({ problems: [], warnings: [] });
    expect(checkByoCluster(config({ storageClass: "fast" }), facts()).problems).toEqual([]);
  });

  it.each([
    [
      "a zone no node is in",
      config({}, { aws: { zones: ["us-west-2a", "us-west-2b", "us-west-2d"] } }),
      facts(),
      /^aws\.zones\.2: no node of the cluster carries topology\.kubernetes\.io\/zone=us-west-2d \(the nodes' zones: us-west-2a, us-west-2b, us-west-2c\)/,
    ],
    [
      "a node selector no pool node has",
      config({ nodeSelector: { pool: "cache" } }),
      facts(),
      /^aws\.zones\.0: no schedulable node in us-west-2a matches byo\.nodeSelector \{"pool":"cache"\}/,
    ],
    [
      "the pool's taint not tolerated",
      config({ tolerations: [] }),
      facts(),
      /^aws\.zones\.0: .*tolerates its taints with byo\.tolerations \(nodes there: a1\)/,
    ],
    [
      "a zone whose only pool node is cordoned",
      config(),
      facts({
        nodes: [node("a1", "us-west-2a", { unschedulable: true }), node("b1", "us-west-2b"), node("c1", "us-west-2c")],
      }),
      /^aws\.zones\.0: no schedulable node in us-west-2a/,
    ],
    [
      "a StorageClass the cluster lacks",
      config({ storageClass: "io2" }),
      facts(),
      /^byo\.storageClass: the cluster has no StorageClass "io2" \(it has: gp3, fast\)/,
    ],
    [
      "no StorageClass named and none default",
      config(),
      facts({ storageClasses: [{ name: "gp2", isDefault: false }] }),
      /^byo\.storageClass: unset, and the cluster has no default StorageClass \(it has: gp2;/,
    ],
  ])("refuses %s, naming the key", (_what, c, f, message) => {
    const { problems } = checkByoCluster(c, f);
    expect(problems).toContainEqual(expect.stringMatching(message));
    for (const p of problems) expect(p).toMatch(/^(aws\.zones\.\d|byo\.storageClass): /);
  });

  it("warns, without refusing, when nothing enforces NetworkPolicy; the VPC CNI counts only with its agent on", () => {
    const warned = (daemonSets: ByoClusterFacts["daemonSets"]) =>
      checkByoCluster(config(), facts({ daemonSets })).warnings;
    expect(warned([])).toEqual([expect.stringMatching(/^no NetworkPolicy engine found .*would not be enforced/)]);
    const awsNode = (args: string[]) => ({
      name: "kube-system/aws-node",
      containers: [{ name: "aws-eks-nodeagent", args }],
    });
    expect(warned([awsNode(["--enable-network-policy=false"])])).toHaveLength(1);
    expect(warned([awsNode(["--enable-network-policy=true"])])).toEqual([]);
    expect(warned([{ name: "calico-system/calico-node", containers: [] }])).toEqual([]);
    // Cilium's agent started by the node itself (kube:local): its node annotations say it runs.
    const annotated = facts({ daemonSets: [] });
    annotated.nodes[0] = { ...(annotated.nodes[0] as ByoNode), annotationKeys: ["network.cilium.io/ipv4-cilium-host"] };
    expect(checkByoCluster(config(), annotated).warnings).toEqual([]);
    expect(checkByoCluster(config(), facts({ daemonSets: [], ciliumNodes: 4 })).warnings).toEqual([]);
    expect(checkByoCluster(config(), facts({ daemonSets: [] })).problems).toEqual([]);
  });

  it("warns when a zone's eligible nodes lack the requests the spread puts there", () => {
    const small = { cpuMillicores: 500, memoryBytes: 2 ** 30 };
    const { problems, warnings } = checkByoCluster(
      config(),
      facts({
        nodes: [node("a1", "us-west-2a", { allocatable: small }), node("b1", "us-west-2b"), node("c1", "us-west-2c")],
      }),
    );
    expect(problems).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^us-west-2a: its 1 eligible node\(s\) have 500m CPU and 1024Mi allocatable .*valkey\.resources\.requests/,
      ),
    ]);
  });

  it("skips the node checks with a managed Karpenter NodePool or byo.nodeChecks false (nodes come on demand)", () => {
    const empty = facts({ nodes: [] });
    expect(checkByoCluster(config(), empty).problems).toHaveLength(3);
    expect(checkByoCluster(config({ nodeChecks: false }), empty).problems).toEqual([]);
    expect(
      checkByoCluster(
        config({
          manageKarpenterNodePool: true,
          karpenterNodeRole: "KarpenterNodeRole",
          karpenterDiscoveryTag: "prod",
        }),
        empty,
      ).problems,
    ).toEqual([]);
  });
});
