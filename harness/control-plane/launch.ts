/**
 * One launcher for both local control planes: the e2e tier's kwok plane
 * (tests/e2e/support/control-plane.ts) and kube:local's real cluster (apps/kube-local/cluster.ts).
 * Each builds a ControlPlaneSpec and passes how it spawns a process (the e2e tier as a tracked
 * child on 127.0.0.1, kube:local detached in its outer network namespace and cgroup); the argv of
 * etcd, kube-apiserver, kube-controller-manager and kube-scheduler and the order they start in are
 * built here, from the certificates pki.ts writes.
 */
import { join } from "node:path";

export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
}

export interface ControlPlaneSpec {
  bins: ControlPlaneBinaries;
  /** Where etcd keeps its data (`<dataDir>/etcd`) and the API server its generated certificates. */
  dataDir: string;
  /** pki.ts's files (ca.crt/key, apiserver.crt/key, sa.pub/key, apiserver-kubelet-client.*) and tokens.csv. */
  pkiDir: string;
  etcd: { clientPort: number; peerPort: number };
  /** The API server's address and port (bound and advertised). */
  apiserver: { address: string; port: number };
  serviceCidr: string;
  /** The kubeconfig the controller manager and the scheduler run with (an admin token). */
  kubeconfig: string;
  /**
   * `open`: AlwaysAllow, the kubernetes Service's endpoints not reconciled, the controllers on one
   * shared credential (the kwok plane: fake nodes, no kubelet). `nodes`: Node and RBAC
   * authorization with NodeRestriction, the API server's kubelet client certificate, a credential
   * per controller (kube:local: real kubelets). `rbac`: as `open`, but RBAC decides (the admin
   * token and the controllers are system:masters; other users get only what a binding grants).
   */
  auth: "open" | "rbac" | "nodes";
  /** Pod CIDRs allocated by the controller manager, `maskSize` per node; without it none are (kwok assigns pod IPs). */
  nodeCidrs?: { cidr: string; maskSize: number };
  /** The API server reaches kubelets by their InternalIP (their hostnames do not resolve here). */
  kubeletByInternalIp: boolean;
}

export type ControlPlaneComponent = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";
export interface ControlPlaneCommand {
  name: ControlPlaneComponent;
  argv: string[];
}

export const etcdUrl = (s: ControlPlaneSpec): string => `http://127.0.0.1:${s.etcd.clientPort}`;

export function etcdCommand(s: ControlPlaneSpec): ControlPlaneCommand {
  const peer = `http://127.0.0.1:${s.etcd.peerPort}`;
  return {
    name: "etcd",
    argv: [
      s.bins.etcd,
      "--name=default",
      `--data-dir=${join(s.dataDir, "etcd")}`,
      `--listen-client-urls=${etcdUrl(s)}`,
      `--advertise-client-urls=${etcdUrl(s)}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
  };
}

export function apiserverCommand(s: ControlPlaneSpec): ControlPlaneCommand {
  const pki = (f: string) => join(s.pkiDir, f);
  const auth =
    s.auth === "nodes"
      ? [
          `--kubelet-client-certificate=${pki("apiserver-kubelet-client.crt")}`,
          `--kubelet-client-key=${pki("apiserver-kubelet-client.key")}`,
          "--authorization-mode=Node,RBAC",
          "--enable-admission-plugins=NodeRestriction",
        ]
      : [`--authorization-mode=${s.auth === "rbac" ? "RBAC" : "AlwaysAllow"}`, "--endpoint-reconciler-type=none"];
  return {
    name: "kube-apiserver",
    argv: [
      s.bins.kubeApiserver,
      `--etcd-servers=${etcdUrl(s)}`,
      `--bind-address=${s.apiserver.address}`,
      `--advertise-address=${s.apiserver.address}`,
      `--secure-port=${s.apiserver.port}`,
      `--tls-cert-file=${pki("apiserver.crt")}`,
      `--tls-private-key-file=${pki("apiserver.key")}`,
      `--client-ca-file=${pki("ca.crt")}`,
      `--token-auth-file=${pki("tokens.csv")}`,
      ...auth,
      "--anonymous-auth=false",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki("sa.pub")}`,
      `--service-account-signing-key-file=${pki("sa.key")}`,
      `--service-cluster-ip-range=${s.serviceCidr}`,
      ...(s.kubeletByInternalIp ? ["--kubelet-preferred-address-types=InternalIP"] : []),
      "--allow-privileged=true",
      `--cert-dir=${join(s.dataDir, "apiserver-certs")}`,
      "--profiling=false",
    ],
  };
}

export function controllerManagerCommand(s: ControlPlaneSpec): ControlPlaneCommand {
  const pki = (f: string) => join(s.pkiDir, f);
  const off = ["cloud-node-lifecycle-controller", "service-lb-controller", "node-route-controller"];
  const cidrs = s.nodeCidrs
    ? [
        "--allocate-node-cidrs=true",
        `--cluster-cidr=${s.nodeCidrs.cidr}`,
        `--node-cidr-mask-size=${s.nodeCidrs.maskSize}`,
      ]
    : ["--allocate-node-cidrs=false"];
  return {
    name: "kube-controller-manager",
    argv: [
      s.bins.kubeControllerManager,
      `--kubeconfig=${s.kubeconfig}`,
      "--leader-elect=false",
      "--secure-port=0",
      `--controllers=*,${[...(s.nodeCidrs ? [] : ["node-ipam-controller"]), ...off].map((c) => `-${c}`).join(",")}`,
      ...cidrs,
      `--service-cluster-ip-range=${s.serviceCidr}`,
      `--service-account-private-key-file=${pki("sa.key")}`,
      `--root-ca-file=${pki("ca.crt")}`,
      `--cluster-signing-cert-file=${pki("ca.crt")}`,
      `--cluster-signing-key-file=${pki("ca.key")}`,
      `--use-service-account-credentials=${s.auth === "nodes"}`,
      "--profiling=false",
    ],
  };
}

export function schedulerCommand(s: ControlPlaneSpec): ControlPlaneCommand {
  return {
    name: "kube-scheduler",
    argv: [
      s.bins.kubeScheduler,
      `--kubeconfig=${s.kubeconfig}`,
      "--leader-elect=false",
      "--secure-port=0",
      "--profiling=false",
    ],
  };
}

export interface ControlPlaneRun {
  spawn: (c: ControlPlaneCommand) => void;
  /** Polls `check` until it holds; throws (naming `what`) at the caller's deadline. */
  waitFor: (what: string, check: () => Promise<boolean>) => Promise<void>;
  /** The API server's /readyz answered 200. */
  apiReady: () => Promise<boolean>;
  /** etcd's /health, where the caller can reach it; without it the API server's own retries wait for etcd. */
  etcdHealthy?: () => Promise<boolean>;
  /** Runs once the API server is started, before waiting for it (kube:local exposes it to the host). */
  afterApiserver?: () => void;
  log?: (line: string) => void;
}

/**
 * etcd, then the API server (once etcd is healthy, where that can be asked), then the controller manager and the
 * scheduler once it is ready.
 */
export async function launchControlPlane(s: ControlPlaneSpec, run: ControlPlaneRun): Promise<void> {
  run.spawn(etcdCommand(s));
  if (run.etcdHealthy) {
    await run.waitFor("etcd /health", run.etcdHealthy);
    run.log?.("etcd healthy");
  }
  run.spawn(apiserverCommand(s));
  run.afterApiserver?.();
  await run.waitFor("kube-apiserver /readyz", run.apiReady);
  run.log?.(`kube-apiserver ready at https://${s.apiserver.address}:${s.apiserver.port}`);
  run.spawn(controllerManagerCommand(s));
  run.spawn(schedulerCommand(s));
}
