/**
 * The cluster add-ons that run as pods: CoreDNS (the `kube-dns` Service at DNS_SERVICE_IP) and
 * rancher's local-path-provisioner, as API objects (pure; cluster.ts creates them).
 *
 * CoreDNS's Corefile has the kubernetes plugin only, and the binary has no forward plugin at all
 * (.ci/toolchain/coredns/main.go): a name outside the cluster gets NXDOMAIN/SERVFAIL, never an
 * answer from outside. Manifests follow CoreDNS's deployment/kubernetes/coredns.yaml.sed and
 * local-path-provisioner's deploy/local-path-storage.yaml (RBAC cut to what each one reads).
 */
import { CLUSTER_DOMAIN, DNS_SERVICE_IP, POD_CIDR, SERVICE_CIDR, type NodePlan } from "./plan.js";

type Obj = Record<string, unknown>;

export const LOCAL_PATH_STORAGE_CLASS = "local-path";

/** CoreDNS's labels: its Deployment's pods and the kube-dns Service's selector. */
const COREDNS_LABELS = { "k8s-app": "kube-dns" };

/** CoreDNS's ServiceAccount and its RBAC (list/watch of what the kubernetes plugin serves). */
function coreDnsRbac(): Obj[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: "kube-system" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
  ];
}

/** CoreDNS's ConfigMap: the Corefile (kubernetes plugin only, `cache 30`). */
function coreDnsConfigMap(): Obj {
  const corefile = `.:53 {
    errors
    health
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
      pods insecure
    }
    cache 30
    loadbalance
    reload
}
`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "coredns", namespace: "kube-system" },
    data: { Corefile: corefile },
  };
}

/** CoreDNS's container: the Corefile from its ConfigMap, DNS on 53 (UDP and TCP), health and ready probes. */
function coreDnsContainer(image: string): Obj {
  return {
    name: "coredns",
    image,
    imagePullPolicy: "Never",
    args: ["-conf", "/etc/coredns/Corefile"],
    ports: [
      { name: "dns", containerPort: 53, protocol: "UDP" },
      { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
    ],
    securityContext: {
      capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
      readOnlyRootFilesystem: true,
    },
    livenessProbe: { httpGet: { path: "/health", port: 8080 }, initialDelaySeconds: 10 },
    readinessProbe: { httpGet: { path: "/ready", port: 8181 } },
    volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
  };
}

/** CoreDNS's Deployment: one replica, resolving through the node (dnsPolicy Default). */
function coreDnsDeployment(image: string, labels: Record<string, string>): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "coredns", namespace: "kube-system", labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: "coredns",
          dnsPolicy: "Default",
          priorityClassName: "system-cluster-critical",
          containers: [coreDnsContainer(image)],
          volumes: [{ name: "config", configMap: { name: "coredns" } }],
        },
      },
    },
  };
}

/** The kube-dns Service at DNS_SERVICE_IP. */
function kubeDnsService(labels: Record<string, string>): Obj {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "kube-dns", namespace: "kube-system", labels: { ...labels, "kubernetes.io/name": "CoreDNS" } },
    spec: {
      selector: labels,
      clusterIP: DNS_SERVICE_IP,
      ports: [
        { name: "dns", port: 53, protocol: "UDP" },
        { name: "dns-tcp", port: 53, protocol: "TCP" },
      ],
    },
  };
}

/**
 * CoreDNS as EKS's add-on configures it where it matters to the release: the kubernetes plugin's
 * default record TTL (5 s), `cache 30` capped by it. kubeadm's Corefile sets `ttl 30`, which this
 * one had: a pod back on a new IP was then served its old address for up to 30 s (HAProxy's write
 * backend, the Sentinels), 6 times longer than on EKS.
 */
export function coreDnsObjects(image: string): Obj[] {
  const labels = { ...COREDNS_LABELS };
  return [...coreDnsRbac(), coreDnsConfigMap(), coreDnsDeployment(image, labels), kubeDnsService(labels)];
}

/**
 * The provisioner's ServiceAccount, which its helper pods (mkdir/rm of a volume's directory) also
 * run as: the name its `--service-account-name` flag defaults to.
 */
const SA = "local-path-provisioner-service-account";

/** The provisioner's namespace. */
const LOCAL_PATH_NS = "local-path-storage";

/** The provisioner's ServiceAccount and its RBAC (nodes, claims, volumes, its helper pods, events, storage classes). */
function localPathRbac(ns: string): Obj[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SA, namespace: ns } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "local-path-provisioner" },
      rules: [
        {
          apiGroups: [""],
          resources: ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"],
          verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
        },
        {
          apiGroups: [""],
          resources: ["persistentvolumes"],
          verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
        },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "local-path-provisioner" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "local-path-provisioner" },
      subjects: [{ kind: "ServiceAccount", name: SA, namespace: ns }],
    },
  ];
}

/** The provisioner's ConfigMap: each node's volume directory, the helper pod's setup/teardown scripts and spec. */
function localPathConfigMap(ns: string, helperImage: string, nodes: NodePlan[]): Obj {
  const config = {
    nodePathMap: nodes.map((n) => ({ node: n.name, paths: [`${n.dir}/volumes`] })),
  };
  const setup = `#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n`;
  const teardown = `#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n`;
  const helperPod = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: helper-pod\nspec:\n  containers:\n  - name: helper-pod\n    image: ${helperImage}\n    imagePullPolicy: Never\n`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "local-path-config", namespace: ns },
    data: {
      "config.json": JSON.stringify(config, null, 2),
      "setup": setup,
      "teardown": teardown,
      "helperPod.yaml": helperPod,
    },
  };
}

/** The provisioner's Deployment: one replica reading its ConfigMap. */
function localPathDeployment(ns: string, image: string): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "local-path-provisioner", namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "local-path-provisioner" } },
      template: {
        metadata: { labels: { app: "local-path-provisioner" } },
        spec: {
          serviceAccountName: SA,
          containers: [
            {
              name: "local-path-provisioner",
              image,
              imagePullPolicy: "Never",
              command: ["local-path-provisioner", "--debug", "start", "--config", "/etc/config/config.json"],
              env: [{ name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }],
              volumeMounts: [{ name: "config", mountPath: "/etc/config/" }],
            },
          ],
          volumes: [{ name: "config", configMap: { name: "local-path-config" } }],
        },
      },
    },
  };
}

/** The default StorageClass, bound when the pod is scheduled (WaitForFirstConsumer). */
function localPathStorageClass(): Obj {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name: LOCAL_PATH_STORAGE_CLASS,
      annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
    },
    provisioner: "rancher.io/local-path",
    volumeBindingMode: "WaitForFirstConsumer",
    reclaimPolicy: "Delete",
  };
}

/** local-path-provisioner; each node's volumes live under its own state directory. */
export function localPathObjects(image: string, helperImage: string, nodes: NodePlan[]): Obj[] {
  const ns = LOCAL_PATH_NS;
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    ...localPathRbac(ns),
    localPathConfigMap(ns, helperImage, nodes),
    localPathDeployment(ns, image),
    localPathStorageClass(),
  ];
}

/** For the README/status: the ranges the cluster uses. */
export const RANGES = { pods: POD_CIDR, services: SERVICE_CIDR, dns: DNS_SERVICE_IP } as const;
