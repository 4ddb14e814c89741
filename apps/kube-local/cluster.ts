/**
 * `kube:local up|down|status`: the local real cluster of docs/real-cluster.md. `up` is idempotent
 * (a healthy cluster is reported as is; a broken one is torn down and started again) and bounded
 * in time; `down` removes everything `up` made, also after a crash (host.ts teardown).
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { freePort } from "../../harness/local/ports.js";
import { sleep } from "../../core/util/poll-until.js";
import { coreDnsObjects, localPathObjects } from "./addons.js";
import { apiClient, applyAll, type Api } from "./api.js";
import { createCgroup, createNetwork, isSocket, routePodCidrs, sh, spawnDetached, teardown } from "./host.js";
import { nodeScript } from "./node-script.js";
import { launchControlPlane, type ControlPlaneSpec } from "../../harness/control-plane/launch.js";
import { makePki, tokenKubeconfig } from "../../harness/control-plane/pki.js";
import * as P from "./plan.js";

const ROOT = resolve(import.meta.dirname, "../..");
export const STATE_DIR =
  process.env.VALKEY_ON_EKS_KUBE_LOCAL_DIR ??
  join(process.env.VALKEY_ON_EKS_CACHE ?? join(homedir(), ".cache/valkey-on-eks"), "kube-local");

export interface ClusterStatus {
  kubeconfig: string;
  nodes: Array<{ name: string; zone: string; ready: boolean }>;
  images: Record<string, string>;
}

interface State {
  kubeconfig: string;
  images: Record<string, string>;
  token: string;
}

const stateFile = (dir: string) => join(dir, "state.json");

function toolDirs(): Record<string, string> {
  const out = sh("bash", [join(ROOT, ".ci/toolchain/install.sh"), "--dirs", "--real-cluster"]);
  return Object.fromEntries(
    out
      .trim()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

/** What must be on the machine (Debian packages) besides the toolchain; names each missing one. */
function requireHost(): void {
  if (process.getuid?.() !== 0) throw new Error("kube:local needs root (network namespaces, cgroups, mounts)");
  const need: Array<[string, string]> = [
    ["/usr/bin/containerd", "containerd"],
    ["/usr/sbin/runc", "runc"],
    ["/usr/bin/ctr", "containerd"],
    ["/usr/bin/socat", "socat"],
    ["/usr/sbin/iptables", "iptables"],
    ["/usr/lib/cni/loopback", "containernetworking-plugins"],
    ["/usr/lib/llvm-19/bin/clang", "clang-19"],
    ["/usr/lib/llvm-19/bin/llc", "llvm-19"],
    ["/usr/sbin/debootstrap", "debootstrap"],
  ];
  const missing = need.filter(([p]) => !existsSync(p)).map(([, pkg]) => pkg);
  if (missing.length > 0)
    throw new Error(`kube:local needs Debian packages: apt-get install ${[...new Set(missing)].join(" ")}`);
}

/** Builds (or finds cached) the images: name -> { ref, archive }. */
function buildImages(): Record<string, { ref: string; archive: string }> {
  const out = execFileSync("bash", [join(ROOT, "apps/kube-local/images.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return Object.fromEntries(
    out
      .trim()
      .split("\n")
      .map((l) => l.split(" "))
      .map(([name, ref, archive]) => [name!, { ref: ref!, archive: archive! }]),
  );
}

export async function status(plan = P.clusterPlan(STATE_DIR)): Promise<ClusterStatus | undefined> {
  if (!existsSync(stateFile(plan.dir))) return undefined;
  const state = JSON.parse(readFileSync(stateFile(plan.dir), "utf8")) as State;
  const api = apiClient(state.kubeconfig);
  try {
    const { body } = await api<{
      items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }>;
    }>("GET", "/api/v1/nodes");
    const ready = new Map(
      body.items.map((n) => [
        n.metadata.name,
        n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
      ]),
    );
    return {
      kubeconfig: state.kubeconfig,
      images: state.images,
      nodes: plan.nodes.map((n) => ({ name: n.name, zone: n.zone, ready: ready.get(n.name) ?? false })),
    };
  } catch {
    return {
      kubeconfig: state.kubeconfig,
      images: state.images,
      nodes: plan.nodes.map((n) => ({ name: n.name, zone: n.zone, ready: false })),
    };
  }
}

export async function down(plan = P.clusterPlan(STATE_DIR)): Promise<void> {
  await teardown(plan);
  rmSync(plan.dir, { recursive: true, force: true });
}

type Images = ReturnType<typeof buildImages>;
type WaitFor = (what: string, check: () => Promise<boolean>) => Promise<void>;
type ControlPlaneSpawn = (name: string, argv: string[]) => number;

/** The cluster's credentials: the PKI's files, the CA, and the bearer tokens of tokens.csv. */
interface Credentials {
  pki: (f: string) => string;
  caPem: string;
  admin: string;
  nodeTokens: string[];
  proxyToken: string;
  ciliumToken: string;
}

interface NodeList {
  items: Array<{
    metadata: { name: string };
    spec: { podCIDR?: string };
    status: {
      conditions?: Array<{ type: string; status: string; message?: string }>;
      addresses?: Array<{ type: string; address: string }>;
    };
  }>;
}

/** Every toolchain directory must be built. */
function requireTools(tools: Record<string, string>): void {
  for (const [k, d] of Object.entries(tools))
    if (!existsSync(d)) throw new Error(`${k} not built (${d}): run bash .ci/toolchain/install.sh --real-cluster`);
}

/**
 * The PKI (CA, apiserver, kubelet client, service-account keys) and the tokens of admin, nodes, kube-proxy and Cilium
 * (tokens.csv).
 */
function makeCredentials(plan: P.ClusterPlan, dir: string): Credentials {
  mkdirSync(join(dir, "pki"), { recursive: true });
  makePki(join(dir, "pki"), {
    caName: "valkey-on-eks-kube-local-ca",
    days: 30,
    apiserverIps: [P.API_IP, P.KUBERNETES_SERVICE_IP],
    kubeletClient: true,
  });
  const pki = (f: string) => join(dir, "pki", f);
  const caPem = readFileSync(pki("ca.crt"), "utf8");
  const tok = () => randomBytes(24).toString("hex");
  const admin = tok();
  const nodeTokens = plan.nodes.map(() => tok());
  const proxyToken = tok();
  const ciliumToken = tok();
  writeFileSync(
    pki("tokens.csv"),
    [
      `${admin},admin,admin,"system:masters"`,
      `${proxyToken},system:kube-proxy,kube-proxy`,
      `${ciliumToken},cilium,cilium,"system:masters"`,
      ...plan.nodes.map((n, i) => `${nodeTokens[i]},system:node:${n.name},${n.name},"system:nodes"`),
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return { pki, caPem, admin, nodeTokens, proxyToken, ciliumToken };
}

/** The apiserver reached from the host: a unix socket in the outer namespace, forwarded to 127.0.0.1:`hostPort`. */
function exposeApiserver(
  cp: ControlPlaneSpawn,
  plan: P.ClusterPlan,
  dir: string,
  logs: string,
  hostPort: number,
): void {
  const apiSock = join(dir, "apiserver.sock");
  cp("socat-outer", ["socat", `UNIX-LISTEN:${apiSock},fork,unlink-early`, `TCP:${P.API_IP}:${P.API_PORT}`]);
  spawnDetached(
    ["socat", `TCP-LISTEN:${hostPort},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${apiSock}`],
    join(logs, "socat-host.log"),
    plan.controlPlaneCgroup,
  );
}

/** A failure no amount of waiting mends (a node's supervisor exited): `waitFor` rethrows it at once. */
class UpFailed extends Error {}

/**
 * Polls `check` every 500 ms until it holds; past `deadline` it throws, naming the last error and where the logs are.
 */
function waiter(deadline: number, logs: string, dir: string): WaitFor {
  return async (what: string, check: () => Promise<boolean>): Promise<void> => {
    let last = "";
    for (;;) {
      try {
        if (await check()) return;
      } catch (e) {
        if (e instanceof UpFailed) throw e;
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline)
        throw new Error(
          `kube:local up: timed out waiting for ${what}${last ? `: ${last}` : ""} (logs: ${logs}, ${join(dir, "nodes")})`,
        );
      await sleep(500);
    }
  };
}

/**
 * The control plane's launch: etcd and the API server in the outer namespace, node CIDRs allocated, Node and RBAC
 * authorization (harness/control-plane/launch.ts).
 */
function controlPlaneSpec(
  tools: Record<string, string>,
  dir: string,
  creds: Credentials,
  inCluster: string,
): ControlPlaneSpec {
  const k8s = (b: string) => join(tools.kubernetes!, b);
  const cpKubeconfig = join(dir, "cp.kubeconfig");
  writeFileSync(cpKubeconfig, tokenKubeconfig(inCluster, creds.caPem, creds.admin), {
    mode: 0o600,
  });
  return {
    bins: {
      etcd: join(tools.etcd!, "etcd"),
      kubeApiserver: k8s("kube-apiserver"),
      kubeControllerManager: k8s("kube-controller-manager"),
      kubeScheduler: k8s("kube-scheduler"),
    },
    dataDir: dir,
    pkiDir: join(dir, "pki"),
    etcd: { clientPort: 2379, peerPort: 2380 },
    apiserver: { address: P.API_IP, port: P.API_PORT },
    serviceCidr: P.SERVICE_CIDR,
    kubeconfig: cpKubeconfig,
    auth: "nodes",
    nodeCidrs: { cidr: P.POD_CIDR, maskSize: 24 },
    kubeletByInternalIp: true,
  };
}

/** Cilium's CRDs (its operator, not built, would register them). */
async function applyCiliumCrds(api: Api, tools: Record<string, string>): Promise<void> {
  const crdDir = join(tools.cilium!, "..", "crds");
  const crds = readdirSync(crdDir).flatMap((f) =>
    parseAllDocuments(readFileSync(join(crdDir, f), "utf8")).map((d) => d.toJS() as Record<string, unknown>),
  );
  await applyAll(
    api,
    crds.filter((c) => c && c.kind === "CustomResourceDefinition"),
  );
}

/**
 * A node's files: CNI binaries, volume directory, containerd/kubelet/kube-proxy configs, its kubeconfigs, an empty
 * resolv.conf.
 */
function writeNodeFiles(
  n: P.NodePlan,
  i: number,
  tools: Record<string, string>,
  images: Images,
  creds: Credentials,
  inCluster: string,
): void {
  const { pki, caPem, nodeTokens, proxyToken, ciliumToken } = creds;
  mkdirSync(join(n.dir, "cni", "bin"), { recursive: true });
  mkdirSync(join(n.dir, "cni", "net.d"), { recursive: true });
  mkdirSync(join(n.dir, "volumes"), { recursive: true });
  symlinkSync(join(tools.cilium!, "cilium-cni"), join(n.dir, "cni", "bin", "cilium-cni"));
  symlinkSync("/usr/lib/cni/loopback", join(n.dir, "cni", "bin", "loopback"));
  writeFileSync(join(n.dir, "containerd.toml"), P.containerdConfig(n, images.pause!.ref));
  writeFileSync(join(n.dir, "kubelet.yaml"), P.kubeletConfig(n, pki("ca.crt")));
  writeFileSync(join(n.dir, "kubelet.kubeconfig"), tokenKubeconfig(inCluster, caPem, nodeTokens[i]!), {
    mode: 0o600,
  });
  writeFileSync(join(n.dir, "kube-proxy.kubeconfig"), tokenKubeconfig(inCluster, caPem, proxyToken), {
    mode: 0o600,
  });
  writeFileSync(join(n.dir, "cilium.kubeconfig"), tokenKubeconfig(inCluster, caPem, ciliumToken), { mode: 0o600 });
  writeFileSync(join(n.dir, "kube-proxy.yaml"), P.kubeProxyConfig(n, join(n.dir, "kube-proxy.kubeconfig")));
  writeFileSync(
    join(n.dir, "resolv.conf"),
    "# kube:local: no upstream resolver (the cluster DNS answers cluster names only)\n",
  );
}

/**
 * A node: its files, then its node.sh (containerd, kubelet, kube-proxy, cilium-agent) started in its namespace and
 * cgroup.
 */
function startNode(
  plan: P.ClusterPlan,
  n: P.NodePlan,
  i: number,
  tools: Record<string, string>,
  images: Images,
  creds: Credentials,
  inCluster: string,
): number {
  writeNodeFiles(n, i, tools, images, creds, inCluster);
  const archives = Object.values(images).map((im) => im.archive);
  const bins = {
    kubelet: join(tools["kubernetes-node"]!, "kubelet"),
    kubeProxy: join(tools["kubernetes-node"]!, "kube-proxy"),
    ciliumAgent: join(tools.cilium!, "cilium-agent"),
    llvmBin: "/usr/lib/llvm-19/bin",
  };
  const script = nodeScript(
    n,
    bins,
    P.ciliumArgs(n, join(n.dir, "cilium.kubeconfig"), join(tools.cilium!, "..")),
    P.nodeLabels(plan, n),
    archives,
  );
  writeFileSync(join(n.dir, "node.sh"), script, { mode: 0o755 });
  createCgroup(`${n.cgroup}/system`);
  createCgroup(`${n.cgroup}/pods`);
  return spawnDetached(
    ["unshare", "--mount", "--propagation", "private", "sh", join(n.dir, "node.sh")],
    join(n.dir, "node.log"),
    `${n.cgroup}/system`,
    n.netns,
  );
}

/**
 * Waits for every node to be Ready, then routes each node's pod CIDR to it from the outer namespace. A node's
 * supervisor that exits fails the wait at once; while nodes are pending, the wait's last error names each with its
 * Ready condition and the last lines of its logs, so a timeout says where a node stopped.
 */
async function awaitNodesAndRoute(
  api: Api,
  plan: P.ClusterPlan,
  supervisors: number[],
  waitFor: WaitFor,
): Promise<void> {
  let nodes: NodeList["items"] = [];
  await waitFor(`${plan.nodes.length} Ready nodes`, async () => {
    for (const [i, n] of plan.nodes.entries())
      if (!alive(supervisors[i]!))
        throw new UpFailed(`kube:local up: node ${n.name}'s supervisor exited: ${nodeLogTail(n)}`);
    nodes = (await api<NodeList>("GET", "/api/v1/nodes")).body.items;
    const pending = plan.nodes
      .map((n) => ({
        n,
        ready: nodes.find((x) => x.metadata.name === n.name)?.status.conditions?.find((c) => c.type === "Ready"),
      }))
      .filter(({ ready }) => ready?.status !== "True");
    if (pending.length === 0) return true;
    throw new Error(
      pending
        .map(
          ({ n, ready }) =>
            `${n.name}: ${ready ? `Ready=${ready.status} ${ready.message ?? ""}` : "not registered"} [${nodeLogTail(n)}]`,
        )
        .join("; "),
    );
  });
  routePodCidrs(
    nodes
      .map((n) => ({
        cidr: n.spec.podCIDR ?? "",
        via: n.status.addresses?.find((a) => a.type === "InternalIP")?.address ?? "",
      }))
      .filter((r) => r.cidr && r.via),
  );
}

/** True while process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The last line of a node's supervisor log and of its kubelet's and cilium-agent's logs (200 characters each). */
function nodeLogTail(n: P.NodePlan): string {
  const last = (f: string) => {
    if (!existsSync(f)) return "";
    const fd = openSync(f, "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, 4096));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      const lines = buf.toString("utf8").trim().split("\n");
      return (lines[lines.length - 1] ?? "").slice(0, 200);
    } finally {
      closeSync(fd);
    }
  };
  return [
    `node.log: ${last(join(n.dir, "node.log"))}`,
    ...["kubelet", "cilium-agent"].map((c) => `${c}: ${last(join(n.dir, "logs", `${c}.log`))}`),
  ].join(" | ");
}

/** The state file: the kubeconfig, the admin token and the images' refs. */
function writeState(dir: string, kubeconfig: string, admin: string, images: Images): void {
  const state: State = {
    kubeconfig,
    token: admin,
    images: Object.fromEntries(Object.entries(images).map(([k, v]) => [k, v.ref])),
  };
  writeFileSync(stateFile(dir), JSON.stringify(state, null, 2));
}

export async function up(
  log: (m: string) => void,
  plan = P.clusterPlan(STATE_DIR),
  timeoutMs = 600_000,
): Promise<ClusterStatus> {
  const current = await status(plan);
  if (current && current.nodes.every((n) => n.ready)) return current;
  if (current) log("a previous cluster is not healthy: tearing it down first");
  await down(plan);
  requireHost();
  const deadline = Date.now() + timeoutMs;
  const tools = toolDirs();
  requireTools(tools);
  log("building or finding the images");
  const images = buildImages();
  const dir = plan.dir;
  const creds = makeCredentials(plan, dir);
  const inCluster = `https://${P.API_IP}:${P.API_PORT}`;
  const hostPort = await freePort();
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, tokenKubeconfig(`https://127.0.0.1:${hostPort}`, creds.caPem, creds.admin), {
    mode: 0o600,
  });

  log("network namespaces and cgroups");
  createNetwork(plan);
  createCgroup(plan.controlPlaneCgroup);
  const logs = join(dir, "logs");
  mkdirSync(logs, { recursive: true });
  const cp = (name: string, argv: string[]) =>
    spawnDetached(argv, join(logs, `${name}.log`), plan.controlPlaneCgroup, P.OUTER_NETNS);
  const api = apiClient(kubeconfig);
  const waitFor = waiter(deadline, logs, dir);
  await launchControlPlane(controlPlaneSpec(tools, dir, creds, inCluster), {
    spawn: (c) => cp(c.name, c.argv),
    waitFor,
    afterApiserver: () => exposeApiserver(cp, plan, dir, logs, hostPort),
    apiReady: async () => (await api("GET", "/readyz")).status === 200,
    log,
  });
  await applyCiliumCrds(api, tools);

  log("starting the nodes");
  const supervisors = plan.nodes.map((n, i) => startNode(plan, n, i, tools, images, creds, inCluster));
  await awaitNodesAndRoute(api, plan, supervisors, waitFor);
  log("nodes Ready; starting cluster DNS and the volume provisioner");
  await applyAll(api, coreDnsObjects(images.coredns!.ref));
  await applyAll(api, localPathObjects(images["local-path-provisioner"]!.ref, images.valkey!.ref, plan.nodes));
  await waitFor("cluster DNS answering kubernetes.default", () => dnsAnswers(plan.nodes[0]!.netns));
  writeState(dir, kubeconfig, creds.admin, images);
  const s = await status(plan);
  if (!s) throw new Error("kube:local up: no state after start");
  return s;
}

/** True when the cluster DNS, asked from a node's namespace, resolves the kubernetes Service. */
export async function dnsAnswers(netns: string): Promise<boolean> {
  const script = `const r=new (require("node:dns").promises.Resolver)({timeout:2000,tries:1});r.setServers(["${P.DNS_SERVICE_IP}"]);r.resolve4("kubernetes.default.svc.${P.CLUSTER_DOMAIN}").then(a=>{console.log(a.join(","));process.exit(a.includes("${P.KUBERNETES_SERVICE_IP}")?0:1)},()=>process.exit(1))`;
  try {
    await promisify(execFile)("nsenter", [`--net=/run/netns/${netns}`, "--", process.execPath, "-e", script], {
      timeout: 10_000,
    });
    return true;
  } catch {
    return false;
  }
}

export { isSocket };
export type { Api };
