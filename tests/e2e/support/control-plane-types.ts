/** The local control plane's binaries, options and handle (control-plane.ts starts it). */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { TOOLCHAIN, toolchainDirs } from "../../support/toolchain.js";

/** Where install.sh puts each control-plane binary (and kwok's stage YAMLs). */
export const controlPlanePaths = {
  etcd: join(toolchainDirs.etcd, "bin", "etcd"),
  kubeApiserver: join(toolchainDirs.kubernetes, "bin", "kube-apiserver"),
  kubeControllerManager: join(toolchainDirs.kubernetes, "bin", "kube-controller-manager"),
  kubeScheduler: join(toolchainDirs.kubernetes, "bin", "kube-scheduler"),
  kwok: join(toolchainDirs.kwok, "bin", "kwok"),
  kwokStages: join(toolchainDirs.kwok, "stages"),
};

/** Throws naming the install script when a control-plane binary is missing (never a silent skip). */
export function requireControlPlaneToolchain(): void {
  const missing = Object.values(controlPlanePaths).filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new Error(
      `local control plane toolchain missing (${missing.join(", ")}): run \`bash .ci/toolchain/install.sh\` (cached under ${TOOLCHAIN})`,
    );
  }
}

/** Annotation kwok manages nodes by (`--manage-nodes-with-annotation-selector`). */
export interface ControlPlaneOptions {
  /** Zones of the three Valkey-pool nodes. @default us-west-2a/b/c */
  zones?: readonly string[];
  /**
   * A /16 inside 127.0.0.0/8: node i (0-based, system node last) gets pod CIDR x.y.(i+1).0/24. @default 127.64.0.0/16
   */
  podCidr?: string;
  /** Further StorageClass names (non-default, Immediate) whose PVCs kwok provisions too. */
  extraStorageClasses?: readonly string[];
  /** Allocatable cpu / memory of every fake node. @default "16" / "128Gi" */
  nodeCpu?: string;
  nodeMemory?: string;
  /** Keep the temporary directory (logs, certificates) after stop(), for debugging. */
  keepDir?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Overall start-up deadline. @default 120 s */
  startTimeoutMs?: number;
  /**
   * For a stand-in that runs Job pods (support/benchmark-pods.ts): kwok completes a Job's pod
   * only once it carries JOB_POD_RELEASE_LABEL=true instead of as soon as it runs, serves every
   * `benchmark` container's log from `benchmarkLogFile` through its kubelet-like server (on a free
   * port every node advertises), and the API server reaches that server by the nodes'
   * InternalIP, so `pods/log` works. @default false
   */
  holdJobPods?: boolean;
  /** RBAC authorization instead of AlwaysAllow (the admin token stays system:masters). @default false */
  rbac?: boolean;
}

export interface FakeNode {
  name: string;
  zone: string;
  /** True for the three Valkey-pool nodes, false for the system node. */
  valkeyPool: boolean;
  podCidr: string;
  internalIp: string;
}

export interface ControlPlane {
  /** Admin kubeconfig (token auth, embedded CA) written to `kubeconfigPath`. */
  kubeconfigPath: string;
  kubeconfig: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** Admin bearer token (group system:masters; authorization is AlwaysAllow anyway). */
  token: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  podCidr: string;
  serviceCidr: string;
  nodes: FakeNode[];
  /** Temporary directory holding logs, certificates and etcd's data. */
  dir: string;
  /**
   * The file kwok's kubelet-like server serves every `benchmark` container's log from (CRI log
   * format) when `holdJobPods`: `pods/log` through the API server reads it. Written by a stand-in.
   */
  benchmarkLogFile: string;
  /** Environment marker every process of this plane carries (`/proc/<pid>/environ`). */
  marker: string;
  /** Every process of this plane that has not exited yet. */
  pids(): number[];
  /** Calls the API server with the admin token; throws on non-2xx unless `allow` lists the status. */
  api<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts?: { contentType?: string; allow?: number[] },
  ): Promise<{ status: number; body: T }>;
  /** The last lines of one component's log (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok). */
  logTail(component: string, lines?: number): string;
  /** Stops every process (SIGTERM, SIGKILL after 10 s) and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
}
