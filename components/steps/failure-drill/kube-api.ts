/**
 * The Kubernetes operations a failure drill performs, behind one interface so the orchestration
 * runs against a fake in tests and against the API server in `pulumi up` (and under kwok in the
 * e2e suite). Standard API operations only: list / delete pods, list nodes and patch
 * `spec.unschedulable` (cordon), create / delete ConfigMaps and Jobs, read a Job and a pod's log,
 * evict a pod (switchover: `pods/eviction` create), delete a PersistentVolumeClaim (lost-volume), exec a command in a
 * member's container
 * (crash-restart: `pods/exec` create) and create a privileged pod on a node (freeze, partition: fault-agent.ts),
 * authorized like
 * the rest by the identity running `pulumi up`.
 */
import type { CoreV1Api, Exec, KubeConfig, V1Pod, V1Status } from "@kubernetes/client-node";
import type { DrillLoadManifests } from "./load-job.js";

export interface DrillPod {
  name: string;
  uid: string;
  nodeName: string | undefined;
  podIP: string | undefined;
  phase: string;
  ready: boolean;
  /** metadata.deletionTimestamp is set (Terminating). */
  deleting: boolean;
  labels: Record<string, string>;
  /** Sum of the containers' restartCount (crash-restart: the container restarted in place). */
  restarts?: number;
}

export interface DrillNode {
  name: string;
  labels: Record<string, string>;
  unschedulable: boolean;
}

export interface DrillJobState {
  succeeded: number;
  failed: number;
}

export interface DrillKubeApi {
  listPods(namespace: string, selector: string): Promise<DrillPod[]>;
  /** `gracePeriodSeconds` 0: at once (the kill); undefined: the pod's own grace period (preStop runs). */
  deletePod(namespace: string, name: string, gracePeriodSeconds: number | undefined): Promise<void>;
  /**
   * Evicts a pod through the Eviction API (policy/v1), as `kubectl drain` does: the pod's
   * PodDisruptionBudget is honoured and the pod is deleted with its own grace period (preStop
   * runs). Resolves "evicted", or "blocked" when the budget refuses it now (HTTP 429).
   */
  evictPod(namespace: string, name: string): Promise<"evicted" | "blocked">;
  listNodes(selector?: string): Promise<DrillNode[]>;
  /** Cordon (true) or uncordon (false). */
  setUnschedulable(node: string, value: boolean): Promise<void>;
  createLoad(m: DrillLoadManifests): Promise<void>;
  /** Deletes the Job (with its pods) and the ConfigMap; a missing one is fine. */
  deleteLoad(namespace: string, name: string): Promise<void>;
  /** undefined when the Job does not exist. */
  jobState(namespace: string, name: string): Promise<DrillJobState | undefined>;
  podLog(namespace: string, pod: string, container: string): Promise<string>;
  /** Deletes a PersistentVolumeClaim (a missing one is fine); it goes once no pod uses it. */
  deletePvc(namespace: string, name: string): Promise<void>;
  /** Creates a pod from its manifest (the freeze/partition fault agent, fault-agent.ts). */
  createPod(namespace: string, body: Record<string, unknown>): Promise<void>;
  /**
   * Runs `command` (argv, no shell unless given) in a pod's container; resolves when it ends, with its exit code
   * (undefined when the connection closed without a status) and the end of its stderr. Rejects when it could not run.
   */
  exec(namespace: string, pod: string, container: string, command: string[]): Promise<ExecResult>;
}

export interface ExecResult {
  /** 0 on success; undefined when the stream closed without a status (the container went away under the exec). */
  exitCode: number | undefined;
  /** The last 500 characters of its stderr. */
  stderr: string;
}

function isNotFound(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown };
  return e?.code === 404 || e?.statusCode === 404;
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** A pod as the drill sees it. */
function drillPodOf(p: V1Pod): DrillPod {
  return {
    name: p.metadata?.name ?? "",
    uid: p.metadata?.uid ?? "",
    nodeName: p.spec?.nodeName || undefined,
    podIP: p.status?.podIP || undefined,
    phase: p.status?.phase ?? "Unknown",
    ready: (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    deleting: p.metadata?.deletionTimestamp !== undefined,
    labels: { ...(p.metadata?.labels ?? {}) },
    restarts: (p.status?.containerStatuses ?? []).reduce((a, c) => a + (c.restartCount ?? 0), 0),
  };
}

/** Listing, deleting and evicting pods. */
function podOperations(core: CoreV1Api): Pick<DrillKubeApi, "listPods" | "deletePod" | "evictPod"> {
  return {
    async listPods(namespace, selector) {
      const list = await core.listNamespacedPod({ namespace, labelSelector: selector });
      return list.items.map(drillPodOf);
    },
    async deletePod(namespace, name, gracePeriodSeconds) {
      await ignoreNotFound(
        core.deleteNamespacedPod({
          namespace,
          name,
          ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
        }),
      );
    },
    async evictPod(namespace, name) {
      try {
        await core.createNamespacedPodEviction({
          namespace,
          name,
          body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace } },
        });
        return "evicted";
      } catch (err) {
        if ((err as { code?: unknown }).code === 429) return "blocked";
        if (isNotFound(err)) return "evicted";
        throw err;
      }
    },
  };
}

/**
 * Runs a command in a pod's container (the `pods/exec` websocket), its stdout discarded: its exit code from the status
 * the API server sends when it ends (`NonZeroExitCode` carries it), undefined when the socket closes first.
 * A failure status without an exit code (no such container, say) rejects.
 */
function execIn(ExecClient: typeof Exec, kc: KubeConfig): DrillKubeApi["exec"] {
  return async (namespace, pod, container, command) => {
    const { Writable } = await import("node:stream");
    const sink = new Writable({ write: (_c, _e, done) => done() });
    let stderr = "";
    const errSink = new Writable({
      write: (c: Buffer, _e, done) => {
        stderr = (stderr + c.toString()).slice(-500);
        done();
      },
    });
    return new Promise<ExecResult>((resolve, reject) => {
      const onStatus = (status: V1Status) => {
        if (status.status !== "Failure") return resolve({ exitCode: 0, stderr });
        const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
        if (code !== undefined && /^\d+$/.test(code)) return resolve({ exitCode: Number(code), stderr });
        reject(
          new Error(`exec in ${pod}/${container}: ${status.message ?? "failed"}${stderr ? `: ${stderr.trim()}` : ""}`),
        );
      };
      new ExecClient(kc)
        .exec(namespace, pod, container, command, sink, errSink, null, false, onStatus)
        .then(
          (ws: { on(event: "close", f: () => void): unknown }) =>
            ws.on("close", () => resolve({ exitCode: undefined, stderr })),
          reject,
        );
    });
  };
}

/** DrillKubeApi over @kubernetes/client-node 2.x. */
export async function kubernetesDrillApi(kubeconfig: string, context?: string): Promise<DrillKubeApi> {
  const [k8s, { loadKubeConfig }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../../kubernetes/pod-api.js"),
  ]);
  const kc = loadKubeConfig(kubeconfig, context);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
  return {
    ...podOperations(core),
    async listNodes(selector) {
      const list = await core.listNode(selector === undefined ? {} : { labelSelector: selector });
      return list.items.map((n) => ({
        name: n.metadata?.name ?? "",
        labels: { ...(n.metadata?.labels ?? {}) },
        unschedulable: n.spec?.unschedulable === true,
      }));
    },
    async setUnschedulable(node, value) {
      await core.patchNode({ name: node, body: { spec: { unschedulable: value } } }, mergePatch);
    },
    async createLoad(m) {
      const namespace = m.job.metadata.namespace;
      await core.createNamespacedConfigMap({ namespace, body: m.configMap });
      await batch.createNamespacedJob({ namespace, body: m.job });
    },
    async deleteLoad(namespace, name) {
      await ignoreNotFound(batch.deleteNamespacedJob({ namespace, name, propagationPolicy: "Background" }));
      await ignoreNotFound(core.deleteNamespacedConfigMap({ namespace, name }));
    },
    async jobState(namespace, name) {
      try {
        const job = await batch.readNamespacedJob({ namespace, name });
        return { succeeded: job.status?.succeeded ?? 0, failed: job.status?.failed ?? 0 };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async podLog(namespace, pod, container) {
      return core.readNamespacedPodLog({ namespace, name: pod, container });
    },
    async createPod(namespace, body) {
      await core.createNamespacedPod({ namespace, body });
    },
    async deletePvc(namespace, name) {
      await ignoreNotFound(core.deleteNamespacedPersistentVolumeClaim({ namespace, name }));
    },
    exec: execIn(k8s.Exec, kc),
  };
}
