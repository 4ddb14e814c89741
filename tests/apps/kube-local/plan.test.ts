/**
 * The local real cluster's plan and generated files (apps/kube-local): every node gets its own
 * address, namespace, cgroup subtree and runtime paths; the cluster DNS has no way out; the node
 * script confines its mounts to the node's own mount namespace. Pure: nothing is started here (the
 * running cluster is tested in tests/pods/).
 */
import { describe, expect, it } from "vitest";
import { coreDnsObjects, localPathObjects } from "../../../apps/kube-local/addons.js";
import { collectionPath } from "../../../apps/kube-local/api.js";
import { nodeScript, shq } from "../../../apps/kube-local/node-script.js";
import * as P from "../../../apps/kube-local/plan.js";

const plan = P.clusterPlan("/state");

describe("clusterPlan", () => {
  it("one node per zone, each with its own address, netns, veth, state dir and cgroup subtree", () => {
    expect(plan.nodes.map((n) => n.zone)).toEqual([...P.DEFAULT_ZONES]);
    for (const key of ["name", "ip", "netns", "veth", "dir", "cgroup"] as const) {
      expect(new Set(plan.nodes.map((n) => n[key])).size, key).toBe(plan.nodes.length);
    }
    for (const n of plan.nodes) {
      expect(n.ip.startsWith(`${P.NODE_NET}.`)).toBe(true);
      expect(n.cgroup.startsWith(`${plan.cgroup}/`)).toBe(true);
      expect(n.dir.startsWith("/state/")).toBe(true);
    }
    expect(plan.region).toBe("us-west-2");
    expect(() => P.clusterPlan("/s", [])).toThrow(/between 1 and 9 zones/);
    expect(P.clusterPlan("/s", ["us-west-2a", "us-west-2d"]).nodes.map((n) => n.zone)).toEqual([
      "us-west-2a",
      "us-west-2d",
    ]);
    for (const zones of [
      ["us-west-2a", "eu-west-1b"],
      ["us-west-2a", "us-west-2a"],
      ["us west 2a"],
      ["US-WEST-2A"],
      ["us-west-2a;rm"],
    ])
      expect(() => P.clusterPlan("/s", zones), zones.join(",")).toThrow(/distinct names of one region/);
  });

  it("containerd, kubelet and kube-proxy of a node only name that node's paths", () => {
    const [a, b] = plan.nodes;
    const files = [
      P.containerdConfig(a!, "pause:1"),
      P.kubeletConfig(a!, "/state/pki/ca.crt"),
      P.kubeProxyConfig(a!, `${a!.dir}/kp`),
    ].join("\n");
    expect(files).toContain(`${a!.dir}/containerd.sock`);
    expect(files).toContain(`cgroupRoot: ${a!.cgroup}/pods`);
    expect(files).not.toContain(b!.dir);
    expect(P.containerdConfig(a!, "pause:1")).toContain('sandbox_image = "pause:1"');
    expect(P.kubeProxyConfig(a!, "k")).toContain("maxPerCore: 0");
  });

  it("Cilium runs without masquerading or an L7 proxy, routing natively within the pod range", () => {
    const args = P.ciliumArgs(plan.nodes[0]!, "/k", "/lib");
    expect(args).toEqual(
      expect.arrayContaining([
        "--enable-ipv4-masquerade=false",
        "--enable-l7-proxy=false",
        "--routing-mode=native",
        `--ipv4-native-routing-cidr=${P.POD_CIDR}`,
      ]),
    );
  });
});

describe("add-ons", () => {
  it("the Corefile names no forward or other outside source, keeps EKS's record TTL, and kube-dns has the planned ClusterIP", () => {
    const objs = coreDnsObjects("img");
    const corefile = (objs.find((o) => o.kind === "ConfigMap") as { data: { Corefile: string } }).data.Corefile;
    expect(corefile).toContain(`kubernetes ${P.CLUSTER_DOMAIN}`);
    expect(corefile).not.toMatch(/\b(forward|proxy|hosts|file|etcd|route53)\b/);
    // EKS's add-on keeps the plugin's 5 s record TTL (kubeadm's `ttl 30` served a moved pod's old IP for 30 s).
    expect(corefile).not.toMatch(/\bttl\b/);
    expect(corefile).toMatch(/^\s*cache 30$/m);
    expect(objs.find((o) => o.kind === "Service")).toMatchObject({ spec: { clusterIP: P.DNS_SERVICE_IP } });
  });

  it("every add-on object has a known API path", () => {
    for (const o of [...coreDnsObjects("i"), ...localPathObjects("i", "h", plan.nodes)])
      expect(() => collectionPath(o)).not.toThrow();
    expect(collectionPath({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", namespace: "n" } })).toBe(
      "/apis/apps/v1/namespaces/n/deployments",
    );
    expect(() => collectionPath({ apiVersion: "v1", kind: "Pod", metadata: { name: "x" } })).toThrow(
      /no API path known for kind Pod/,
    );
  });
});

describe("nodeScript", () => {
  const n = plan.nodes[1]!;
  const script = nodeScript(
    n,
    { kubelet: "/b/kubelet", kubeProxy: "/b/kube-proxy", ciliumAgent: "/b/cilium-agent", llvmBin: "/llvm" },
    ["--a=1"],
    { "topology.kubernetes.io/zone": n.zone },
    ["/img/x it's.tar"],
  );

  it("joins the node's own cgroups and makes every mount private to its namespace", () => {
    expect(script).toContain(`${n.cgroup}/system/cgroup.procs`);
    const makePrivate = script.indexOf("mount --make-rprivate /");
    const firstMount = script.search(/\nmount (-t|--rbind)/);
    expect(makePrivate).toBeGreaterThan(0);
    expect(makePrivate).toBeLessThan(firstMount);
  });

  it("gives the node its own device-plugin directory before the kubelet starts (the socket path ignores --root-dir)", () => {
    const bind = script.indexOf('mount --bind "$D/device-plugins" /var/lib/kubelet/device-plugins');
    expect(bind).toBeGreaterThan(script.indexOf("mount --make-rprivate /"));
    expect(bind).toBeLessThan(script.indexOf("run kubelet"));
  });

  it("gives the node its own /var/log before containerd and the kubelet start (kubelets GC other nodes' pod logs)", () => {
    const bind = script.indexOf('mount --bind "$D/var-log" /var/log');
    expect(bind).toBeGreaterThan(script.indexOf("mount --make-rprivate /"));
    expect(bind).toBeLessThan(script.indexOf("\nstart_containerd\n"));
    expect(bind).toBeLessThan(script.indexOf("run kubelet"));
  });

  it("starts the node's daemons with its name, address and zone label, quoting paths", () => {
    expect(script).toContain(`--hostname-override=${shq(n.name)} --node-ip=${n.ip}`);
    expect(script).toContain(`topology.kubernetes.io/zone=${n.zone}`);
    expect(script).toContain(`K8S_NODE_NAME=${shq(n.name)}`);
    expect(script).toContain(`'/img/x it'\\''s.tar'`);
  });
});
