/**
 * The local real cluster's layout (docs/real-cluster.md): names, address ranges, and every
 * configuration file that a node or the control plane reads, as pure functions of the plan. Nothing
 * here touches the machine: host.ts and cluster.ts do.
 *
 * All addresses exist only inside the network namespaces that kube:local creates. No veth leads to
 * the host namespace, and the outer namespace has no default route.
 */
import { join } from "node:path";
import { ZONE_LABEL } from "../../vocabulary/labels.js";

/** Prefix of every name kube:local gives the machine (netns, cgroups, devices). */
export const PREFIX = "vk8s";
export const OUTER_NETNS = `${PREFIX}-outer`;
export const BRIDGE = `${PREFIX}0`;
/** The nodes' segment (the "VPC"): the outer namespace's bridge is .1, node i is .(11+i). */
export const NODE_NET = "10.231.0";
export const API_IP = `${NODE_NET}.1`;
export const API_PORT = 6443;
/** Pod addresses: the controller manager hands each node a /24 of this range (node spec.podCIDR). */
export const POD_CIDR = "10.232.0.0/16";
export const SERVICE_CIDR = "10.233.0.0/16";
export const KUBERNETES_SERVICE_IP = "10.233.0.1";
export const DNS_SERVICE_IP = "10.233.0.10";
export const CLUSTER_DOMAIN = "cluster.local";
export const DEFAULT_ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"] as const;
/** cgroup v1 hierarchies (under /sys/fs/cgroup) in which every node gets its own subtree. */
export const CGROUP_CONTROLLERS = [
  "cpu",
  "cpuacct",
  "cpuset",
  "memory",
  "devices",
  "freezer",
  "blkio",
  "pids",
  "systemd",
] as const;

export interface NodePlan {
  /** Kubernetes node name, also its netns name. */
  name: string;
  zone: string;
  ip: string;
  netns: string;
  /** Host-side veth in the outer namespace. */
  veth: string;
  /** State directory of this node (containerd root/state, kubelet root, logs). */
  dir: string;
  /** cgroup path (relative to each hierarchy's root) of this node's subtree. */
  cgroup: string;
}

export interface ClusterPlan {
  dir: string;
  region: string;
  nodes: NodePlan[];
  /** cgroup path of everything kube:local starts (freeze and kill this subtree on down). */
  cgroup: string;
  controlPlaneCgroup: string;
}

/** The plan for a cluster whose state lives in `dir`, one node per zone. */
export function clusterPlan(dir: string, zones: readonly string[] = DEFAULT_ZONES): ClusterPlan {
  if (zones.length === 0 || zones.length > 9) throw new Error(`kube:local: between 1 and 9 zones, got ${zones.length}`);
  const region = zones[0]!.replace(/[a-z]$/, "");
  const bad = zones.filter((z) => !/^[a-z0-9-]+[a-z]$/.test(z) || z.replace(/[a-z]$/, "") !== region || z.length > 30);
  if (bad.length > 0 || new Set(zones).size !== zones.length)
    throw new Error(
      `kube:local: zones must be distinct names of one region like us-west-2a (lowercase, ≤ 30 characters), got ${zones.join(", ")}`,
    );
  const nodes = zones.map((zone, i): NodePlan => {
    const name = `${PREFIX}-${zone}`;
    return {
      name,
      zone,
      ip: `${NODE_NET}.${11 + i}`,
      netns: name,
      veth: `${PREFIX}v${i}`,
      dir: join(dir, "nodes", name),
      cgroup: `/${PREFIX}/${name}`,
    };
  });
  return { dir, region, nodes, cgroup: `/${PREFIX}`, controlPlaneCgroup: `/${PREFIX}/control-plane` };
}

/** Labels that a node's kubelet registers with (`--node-labels`). */
export function nodeLabels(plan: ClusterPlan, node: NodePlan): Record<string, string> {
  return { [ZONE_LABEL]: node.zone, "topology.kubernetes.io/region": plan.region };
}

/** containerd 1.6 config (version 2) of one node: its own root, state, socket and CNI dirs. */
export function containerdConfig(node: NodePlan, pauseImage: string): string {
  const d = node.dir;
  return `version = 2
root = "${d}/containerd/root"
state = "${d}/containerd/state"
[grpc]
  address = "${d}/containerd.sock"
[ttrpc]
  address = "${d}/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${d}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage}"
  stream_server_address = "127.0.0.1"
  # This machine's capability bounding set lacks CAP_SYS_RESOURCE, so no process may lower its
  # oom_score_adj (the kubelet asks -998 for sandboxes, -997 for Guaranteed pods): clamp to
  # containerd's own (0), as containerd does in user namespaces.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${d}/cni/bin"
    conf_dir = "${d}/cni/net.d"
`;
}

/**
 * KubeletConfiguration of one node. cgroupfs driver under the node's own cgroup root; kind's
 * settings for nodes that share one disk (evictions off, image GC at 100%); x509 + webhook authn.
 */
export function kubeletConfig(node: NodePlan, caFile: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${node.ip}
healthzBindAddress: 127.0.0.1
cgroupDriver: cgroupfs
cgroupRoot: ${node.cgroup}/pods
containerRuntimeEndpoint: unix://${node.dir}/containerd.sock
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${caFile}
authorization:
  mode: Webhook
clusterDomain: ${CLUSTER_DOMAIN}
clusterDNS:
  - ${DNS_SERVICE_IP}
resolvConf: ${node.dir}/resolv.conf
failSwapOn: false
imageGCHighThresholdPercent: 100
evictionHard:
  nodefs.available: "0%"
  nodefs.inodesFree: "0%"
  imagefs.available: "0%"
serializeImagePulls: false
`;
}

/** KubeProxyConfiguration: iptables mode; no global conntrack sysctls (a non-initial netns cannot set them). */
export function kubeProxyConfig(node: NodePlan, kubeconfig: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${kubeconfig}
hostnameOverride: ${node.name}
mode: iptables
clusterCIDR: ${POD_CIDR}
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
`;
}

/**
 * cilium-agent's arguments on one node: native routing on the shared segment (routes to other
 * nodes' pod CIDRs), node spec.podCIDR as IPAM, kube-proxy kept, no masquerading, no L7 proxy (no
 * Envoy is built), no Hubble, no health endpoints (cilium-health is not built). Policy enforcement:
 * Cilium's default mode (enforced for an endpoint once a policy selects it), as on EKS with Cilium.
 */
export function ciliumArgs(node: NodePlan, kubeconfig: string, libDir: string): string[] {
  return [
    `--k8s-kubeconfig-path=${kubeconfig}`,
    `--lib-dir=${libDir}`,
    "--ipam=kubernetes",
    "--routing-mode=native",
    `--ipv4-native-routing-cidr=${POD_CIDR}`,
    "--auto-direct-node-routes=true",
    "--enable-ipv4-masquerade=false",
    "--enable-ipv6=false",
    "--kube-proxy-replacement=false",
    "--enable-l7-proxy=false",
    "--enable-hubble=false",
    "--enable-health-checking=false",
    "--enable-endpoint-health-checking=false",
    "--devices=eth0",
    `--write-cni-conf-when-ready=${node.dir}/cni/net.d/05-cilium.conflist`,
    "--cni-exclusive=true",
    "--identity-allocation-mode=crd",
    "--enable-policy=default",
  ];
}
