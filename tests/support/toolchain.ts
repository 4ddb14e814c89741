/**
 * Where .ci/toolchain/install.sh caches each tool, computed the way install.sh computes it (and
 * checked against `install.sh --dirs` by tests/versions.test.ts): the root is
 * $VALKEY_ON_EKS_TOOLCHAIN or ~/.cache/valkey-on-eks/toolchain; a tool built from a wrapper module
 * is keyed `<name>-<version>-<hash>` (hash: first 12 hex digits of sha256(go.mod then go.sum) of
 * the wrapper), a tool from `go install module@version` `<name>-<version>`, data by its versions.
 * Versions come from versions.env.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { versions } from "../../versions.js";

const WRAPPERS = resolve(import.meta.dirname, "../../.ci/toolchain");

export const TOOLCHAIN = process.env.VALKEY_ON_EKS_TOOLCHAIN ?? join(homedir(), ".cache/valkey-on-eks/toolchain");

/**
 * The key part of a wrapper module in .ci/toolchain/ (as install.sh's wrapper_hash): go.mod, go.sum,
 * then main.go when the wrapper is itself the main package (coredns).
 */
export function wrapperHash(wrapper: "pulumi" | "pulumi-kubernetes" | "kubernetes" | "coredns" | "cilium"): string {
  const h = createHash("sha256");
  for (const f of ["go.mod", "go.sum", "main.go"]) {
    const path = join(WRAPPERS, wrapper, f);
    if (f !== "main.go" || existsSync(path)) h.update(readFileSync(path));
  }
  return h.digest("hex").slice(0, 12);
}

/** Each tool's cache directory (its binaries are in `bin/`), by the names `install.sh --dirs` prints. */
export const toolchainDirs = {
  "pulumi": join(TOOLCHAIN, `pulumi-${versions.PULUMI_VERSION}-${wrapperHash("pulumi")}`),
  "pulumi-kubernetes": join(
    TOOLCHAIN,
    `pulumi-kubernetes-${versions.K8S_PROVIDER_VERSION}-${wrapperHash("pulumi-kubernetes")}`,
  ),
  "pulumi-nodejs-dynamic-host": join(TOOLCHAIN, "pulumi-nodejs-dynamic-host"),
  "kubernetes": join(TOOLCHAIN, `kubernetes-${versions.KUBERNETES_VERSION}-${wrapperHash("kubernetes")}`),
  "etcd": join(TOOLCHAIN, `etcd-${versions.ETCD_VERSION}-${wrapperHash("kubernetes")}`),
  "kwok": join(TOOLCHAIN, `kwok-${versions.KWOK_VERSION}`),
  "actionlint": join(TOOLCHAIN, `actionlint-${versions.ACTIONLINT_VERSION}`),
  "kubeconform": join(TOOLCHAIN, `kubeconform-${versions.KUBECONFORM_VERSION}`),
  "karpenter-kwok": join(TOOLCHAIN, `karpenter-kwok-${versions.KARPENTER_CORE_VERSION}`),
} as const;

/**
 * What only `install.sh --real-cluster` builds (and `install.sh --dirs --real-cluster` names): the
 * local real cluster's kubelet and kube-proxy (the control plane's wrapper), CoreDNS, Cilium (its
 * BPF sources in `bpf/` beside `bin/`) and local-path-provisioner. See docs/real-cluster.md.
 */
export const realClusterDirs = {
  "kubernetes-node": join(TOOLCHAIN, `kubernetes-node-${versions.KUBERNETES_VERSION}-${wrapperHash("kubernetes")}`),
  "coredns": join(TOOLCHAIN, `coredns-${versions.COREDNS_VERSION}-${wrapperHash("coredns")}`),
  "cilium": join(TOOLCHAIN, `cilium-${versions.CILIUM_VERSION}-${wrapperHash("cilium")}`),
  "local-path-provisioner": join(TOOLCHAIN, `local-path-provisioner-${versions.LOCAL_PATH_PROVISIONER_VERSION}`),
} as const;

/**
 * The data install.sh caches beside the tools (by the names `install.sh --data` prints): Karpenter's
 * CRDs as the github.com/aws/karpenter-provider-aws module publishes them at the chart version
 * (pkg/apis/crds/*.yaml), the Prometheus Operator's PodMonitor and PrometheusRule CRDs, and the strict JSON schemas of Kubernetes EKS_VERSION from the PyPI
 * package kubernetes-validate, made loadable by kubeconform.
 */
export const toolchainData = {
  "karpenter-crds": join(TOOLCHAIN, `karpenter-crds-${versions.KARPENTER_CHART_VERSION}`),
  "kubernetes-schemas": join(
    TOOLCHAIN,
    `kubernetes-schemas-${versions.KUBERNETES_VALIDATE_VERSION}-${versions.EKS_VERSION}`,
  ),
  "prometheus-operator-crds": join(TOOLCHAIN, `prometheus-operator-crds-${versions.PROMETHEUS_OPERATOR_VERSION}`),
} as const;

/** Karpenter's CRDs at the chart version the program installs (versions.env KARPENTER_CHART_VERSION). */
export const KARPENTER_CRD_DIR = toolchainData["karpenter-crds"];

/** The Prometheus Operator's PodMonitor and PrometheusRule CRDs (versions.env PROMETHEUS_OPERATOR_VERSION). */
export const PROMETHEUS_OPERATOR_CRD_DIR = toolchainData["prometheus-operator-crds"];

/** `path` when it exists; otherwise an error naming what is missing and the command that installs it. */
export function requireInstalled(path: string, what: string): string {
  if (!existsSync(path)) {
    throw new Error(
      `${what} not found at ${path}: run \`bash .ci/toolchain/install.sh --schemas\` (or run the tests through \`bash .ci/setup\`, which does)`,
    );
  }
  return path;
}
