/**
 * The drill's in-cluster write load: one ConfigMap (holding the bundled `load.mjs`) and one Job
 * running it, per fault. Pure builders; the FailureDrill step creates both through the Kubernetes
 * API (they are not Pulumi resources: they live for one drill) and deletes them afterwards.
 *
 * THE JOB CONTRACT (load.mjs and tests/pods/byo-stack.test.ts, which runs it as a real Job, rely on it):
 * - the Job's pods carry the label `valkey-on-eks/drill-load: "true"` (DRILL_LOAD_LABEL), the
 *   NetworkPolicy's client label `valkey-on-eks/client: "true"` (CLIENT_LABEL) and
 *   `app.kubernetes.io/part-of: valkey-on-eks`, `app.kubernetes.io/name: valkey-drill-load`,
 *   `valkey-on-eks/drill-run: <runKey>`;
 * - one container named `drill-load` (DRILL_LOAD_CONTAINER), `command: ["node", "/drill/load.mjs"]`,
 *   a ConfigMap volume mounted at `/drill` whose key `load.mjs` is the bundle;
 * - every setting as an env var (DRILL_ENV): DRILL_MODE (cluster | replication), DRILL_TARGET_HOST
 *   / DRILL_TARGET_PORT (cluster: the client Service; replication: the write Service, i.e.
 *   HAProxy), DRILL_SENTINEL_HOST / DRILL_SENTINEL_PORT / DRILL_MASTER_NAME (replication only),
 *   DRILL_RATE (writes/s per stream), DRILL_LOAD_S (seconds of load), DRILL_KEY_PREFIX (unique
 *   per run and fault), DRILL_WAIT_TIMEOUT_MS, DRILL_COMMAND_TIMEOUT_MS; hosts are
 *   `<service>.<namespace>.svc.cluster.local` names; `VALKEY_PASSWORD` comes from the release
 *   Secret through secretKeyRef (absent when auth is off), never in argv;
 * - restartPolicy Never, backoffLimit 0; the benchmark pod's placement (the Valkey pool's node
 *   selector and tolerations, required anti-affinity against DATA_PLANE_LABEL: never on a Valkey
 *   node);
 * - output: stdout only, the lines of record-lines.ts (formatRecordLines).
 */
import { clientContainerSecurity, clientPodBase, NODE_IMAGE_UID } from "../../client-pod.js";
import { CLIENT_LABEL, type Placement } from "../../shared.js";

export const DRILL_LOAD_LABEL = "valkey-on-eks/drill-load";
export const DRILL_RUN_LABEL = "valkey-on-eks/drill-run";
export const DRILL_LOAD_CONTAINER = "drill-load";
export const DRILL_LOAD_MOUNT = "/drill";
export const DRILL_LOAD_FILE = "load.mjs";

/** The env var names of the contract. */
export const DRILL_ENV = {
  mode: "DRILL_MODE",
  targetHost: "DRILL_TARGET_HOST",
  targetPort: "DRILL_TARGET_PORT",
  sentinelHost: "DRILL_SENTINEL_HOST",
  sentinelPort: "DRILL_SENTINEL_PORT",
  masterName: "DRILL_MASTER_NAME",
  rate: "DRILL_RATE",
  loadS: "DRILL_LOAD_S",
  keyPrefix: "DRILL_KEY_PREFIX",
  waitTimeoutMs: "DRILL_WAIT_TIMEOUT_MS",
  commandTimeoutMs: "DRILL_COMMAND_TIMEOUT_MS",
  password: "VALKEY_PASSWORD",
} as const;

export interface DrillLoadTarget {
  /** Cluster: the client Service host; replication: the write Service (HAProxy) host. */
  host: string;
  port: number;
  /** Replication: the Sentinel Service, its port and the master name. */
  sentinel?: { host: string; port: number; masterName: string };
}

export interface DrillLoadJobArgs {
  namespace: string;
  /** Job and ConfigMap name (DNS-1123, ≤ 63 characters). */
  name: string;
  /** Run key: a label value and part of the key prefix. */
  runKey: string;
  mode: "cluster" | "replication";
  image: string;
  target: DrillLoadTarget;
  rate: number;
  loadS: number;
  keyPrefix: string;
  /** WAIT 1 <ms> after each acknowledged write. @default 500 */
  waitTimeoutMs?: number;
  /** Bound on every command. @default 1000 */
  commandTimeoutMs?: number;
  /** The release Secret holding the password; undefined when auth is off. */
  secretName: string | undefined;
  passwordKey: string;
  placement: Placement;
  /** The bundled load.mjs. */
  script: string;
}

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };

/** Labels of the load pod (and of its Job and ConfigMap). */
export function drillLoadLabels(runKey: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": "valkey-drill-load",
    "app.kubernetes.io/part-of": "valkey-on-eks",
    [CLIENT_LABEL]: "true",
    [DRILL_LOAD_LABEL]: "true",
    [DRILL_RUN_LABEL]: runKey,
  };
}

/** The contract's env vars, in a fixed order. */
export function drillLoadEnv(
  a: Omit<DrillLoadJobArgs, "script" | "placement" | "image" | "name" | "namespace" | "runKey">,
): Env[] {
  const s = a.target.sentinel;
  const env: Env[] = [
    { name: DRILL_ENV.mode, value: a.mode },
    { name: DRILL_ENV.targetHost, value: a.target.host },
    { name: DRILL_ENV.targetPort, value: String(a.target.port) },
    ...(s === undefined
      ? []
      : [
          { name: DRILL_ENV.sentinelHost, value: s.host },
          { name: DRILL_ENV.sentinelPort, value: String(s.port) },
          { name: DRILL_ENV.masterName, value: s.masterName },
        ]),
    { name: DRILL_ENV.rate, value: String(a.rate) },
    { name: DRILL_ENV.loadS, value: String(a.loadS) },
    { name: DRILL_ENV.keyPrefix, value: a.keyPrefix },
    { name: DRILL_ENV.waitTimeoutMs, value: String(a.waitTimeoutMs ?? 500) },
    { name: DRILL_ENV.commandTimeoutMs, value: String(a.commandTimeoutMs ?? 1000) },
    { name: "NODE_NO_WARNINGS", value: "1" },
  ];
  if (a.secretName !== undefined)
    env.push({ name: DRILL_ENV.password, valueFrom: { secretKeyRef: { name: a.secretName, key: a.passwordKey } } });
  return env;
}

/** The ConfigMap and the Job of one drill's load (plain objects, ready for the Kubernetes API). */
export function buildDrillLoadJob(a: DrillLoadJobArgs) {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(a.name))
    throw new Error(`drill load Job name "${a.name}" is not a DNS-1123 label of ≤ 63 characters`);
  if (a.mode === "replication" && a.target.sentinel === undefined)
    throw new Error("drill load in replication mode needs target.sentinel");
  const labels = drillLoadLabels(a.runKey);
  const configMap = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: a.name, namespace: a.namespace, labels },
    data: { [DRILL_LOAD_FILE]: a.script },
  };
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: a.name, namespace: a.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: a.loadS + 600,
      template: {
        metadata: { labels },
        spec: {
          ...clientPodBase(a.placement, NODE_IMAGE_UID),
          containers: [
            {
              name: DRILL_LOAD_CONTAINER,
              image: a.image,
              command: ["node", `${DRILL_LOAD_MOUNT}/${DRILL_LOAD_FILE}`],
              env: drillLoadEnv(a),
              resources: { requests: { cpu: "500m", memory: "256Mi" }, limits: { cpu: "1", memory: "256Mi" } },
              securityContext: clientContainerSecurity(),
              volumeMounts: [{ name: "drill", mountPath: DRILL_LOAD_MOUNT, readOnly: true }],
            },
          ],
          volumes: [{ name: "drill", configMap: { name: a.name } }],
        },
      },
    },
  };
  return { configMap, job };
}

export type DrillLoadManifests = ReturnType<typeof buildDrillLoadJob>;
