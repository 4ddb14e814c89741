/**
 * The deployed restore (config `restore.from`), pure: what a release's member pods gain while the
 * key is set. restore.sh (pod/restore-script.ts, the file the local tests run) goes into the
 * release's ConfigMap and runs as two init containers on the data volume, each in the image that
 * has its tools: `restore-fetch` (the AWS CLI image: the manifest, the shape and slot checks, the
 * object) then `restore-place` (the Valkey image: sha256, valkey-check-rdb, the peers' check that
 * this is a new stack and not a lost volume, the files put in place). A failure of either stops
 * the pod before valkey-server ever runs, so no member starts empty in a restored shard's place.
 * `restore-place` ends with a one-line report in its termination message (what it placed, with
 * the shard's manifest entry, or why nothing): the RestoreCheck step reads it from the pod status.
 *
 * Credentials: on eks EKS Pod Identity through the members' own ServiceAccount (`<release>-restore`,
 * components/aws/restore-access.ts: s3:GetObject under that one backup); on byo the keys of
 * `backup.credentialsSecret` (envFrom) and the server of `backup.endpoint`. A NetworkPolicy adds
 * the egress the fetch needs (the members' own policy allows DNS and members only): eks, HTTPS
 * anywhere and the Pod Identity agent; byo, the endpoint's port.
 */
import type { ValkeyMode } from "../../config/types.js";
import { plannedRanges } from "../../core/backup/restore-check.js";
import { CONFIG_MOUNT, DATA_DIR } from "../../pod/paths.js";
import { RESTORE_PLACE_CONTAINER, TERMINATION_LOG } from "../../pod/restore-message.js";
import { RESTORE_ENV, RESTORE_SCRIPT, restorePod, restoreSteps } from "../../pod/restore-pod.js";
import { VALKEY_PORT } from "../../vocabulary/ports.js";
import { releaseLabels } from "../shared.js";
import type { EnvVar, ServiceAccount } from "./k8s-types.js";
import type { BuiltNetworkPolicy } from "./network-policy.js";
import { cliAuthEnv, stepContainer } from "./pod-env.js";
import { serviceHost } from "./naming.js";
import { restrictedContainer } from "./pod-security.js";
import { CONFIG_VOLUME, DATA_VOLUME, type PodExtras } from "./statefulset.js";

export const RESTORE_SCRIPT_KEY = RESTORE_SCRIPT;
/** The EKS Pod Identity agent (its link-local address and port on every node). */
export const POD_IDENTITY_AGENT = { cidr: "169.254.170.23/32", port: 80 } as const;
const TMP_VOLUME = "restore-tmp";

/** Where a release restores from and how it reaches it. */
export interface RestoreSettings {
  /** `restore.from`: s3://bucket/prefix/<backup id>. */
  from: string;
  /** `backup.awsCliImage`. */
  awsCliImage: string;
  /** The bucket's region (`aws.region`): the CLI finds none by itself in a pod. */
  region: string;
  /** byo: `backup.endpoint` (an S3-compatible server). @default Amazon S3 */
  endpoint?: string;
  /** byo: `backup.credentialsSecret`, read with envFrom. @default none (eks: Pod Identity) */
  credentialsSecret?: string;
  /** eks: the members' ServiceAccount, the Pod Identity association's subject. @default none */
  serviceAccount?: string;
}

/** What the member StatefulSet's pod spec gains. */
export type RestorePodParts = PodExtras;

/** The members' ServiceAccount while restoring on eks. */
export function restoreServiceAccountName(release: string): string {
  return `${release}-restore`;
}

/** eks: the members' ServiceAccount (no token mounted: Pod Identity injects its own); undefined on byo. */
export function restoreServiceAccount(
  namespace: string,
  release: string,
  r: RestoreSettings,
): ServiceAccount | undefined {
  if (r.serviceAccount === undefined) return undefined;
  return {
    metadata: { name: r.serviceAccount, namespace, labels: releaseLabels(release) },
    automountServiceAccountToken: false,
  };
}

/** The ConfigMap entry: restore.sh for this mode (cluster: the new cluster's slot ranges per shard). */
export function restoreScriptFiles(mode: ValkeyMode, primaries: number): Record<string, string> {
  const plannedSlots = mode === "cluster" ? plannedRanges(primaries) : undefined;
  return restorePod({ mode, plannedSlots, configDir: CONFIG_MOUNT }).files;
}

export interface RestorePodInput {
  restore: RestoreSettings;
  valkeyImage: string;
  /** The governing headless Service: the peers the place step asks. */
  headless: string;
  namespace: string;
  /** Password Secret; undefined = auth off. */
  secretName: string | undefined;
}

export function restorePodParts(i: RestorePodInput): RestorePodParts {
  const steps = restoreSteps(CONFIG_MOUNT);
  const mounts = [
    { name: DATA_VOLUME, mountPath: DATA_DIR },
    { name: CONFIG_VOLUME, mountPath: CONFIG_MOUNT, readOnly: true },
  ];
  const podName: EnvVar = { name: RESTORE_ENV.podName, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } };
  const r = i.restore;
  const fetch = stepContainer(
    "restore init container",
    {
      name: "restore-fetch",
      image: r.awsCliImage,
      imagePullPolicy: "IfNotPresent",
      env: [
        podName,
        { name: RESTORE_ENV.from, value: r.from },
        { name: "AWS_REGION", value: r.region },
        ...(r.endpoint === undefined ? [] : [{ name: "AWS_ENDPOINT_URL", value: r.endpoint }]),
        // The CLI caches under $HOME; the root filesystem is read-only.
        { name: "HOME", value: "/tmp" },
      ],
      ...(r.credentialsSecret === undefined ? {} : { envFrom: [{ secretRef: { name: r.credentialsSecret } }] }),
      volumeMounts: [...mounts, { name: TMP_VOLUME, mountPath: "/tmp" }],
      securityContext: restrictedContainer(),
    },
    steps.fetch,
  );
  const place = stepContainer(
    "restore init container",
    {
      name: RESTORE_PLACE_CONTAINER,
      image: i.valkeyImage,
      imagePullPolicy: "IfNotPresent",
      env: [
        podName,
        { name: RESTORE_ENV.peersDns, value: serviceHost(i.headless, i.namespace) },
        { name: RESTORE_ENV.peersPort, value: String(VALKEY_PORT) },
        ...cliAuthEnv(i.secretName),
      ],
      volumeMounts: mounts,
      // Its one-line report (pod/restore-message.ts): the kubelet copies the file into the pod's
      // status (initContainerStatuses[].state.terminated.message), where the RestoreCheck reads it.
      terminationMessagePath: TERMINATION_LOG,
      terminationMessagePolicy: "File",
      securityContext: restrictedContainer(),
    },
    steps.place,
  );
  return {
    initContainers: [fetch, place],
    volumes: [{ name: TMP_VOLUME, emptyDir: { sizeLimit: "64Mi" } }],
    ...(r.serviceAccount === undefined ? {} : { serviceAccountName: r.serviceAccount }),
  };
}

/** The port of an http(s) URL's server (80 / 443 when the URL names none). */
function endpointPort(endpoint: string): number {
  const u = new URL(endpoint);
  if (u.port !== "") return Number(u.port);
  return u.protocol === "http:" ? 80 : 443;
}

/**
 * The egress the fetch needs, added to the members' own policy while `restore.from` is set
 * (NetworkPolicies add up): eks, HTTPS to anywhere (S3's addresses are not a fixed range) and the
 * Pod Identity agent; byo, TCP to the endpoint's port on any address.
 */
export function buildRestoreEgressPolicy(o: {
  name: string;
  namespace: string;
  release: string;
  podSelector: Record<string, string>;
  endpoint: string | undefined;
}): BuiltNetworkPolicy {
  const egress =
    o.endpoint === undefined
      ? [
          { ports: [{ protocol: "TCP", port: 443 }] },
          {
            to: [{ ipBlock: { cidr: POD_IDENTITY_AGENT.cidr } }],
            ports: [{ protocol: "TCP", port: POD_IDENTITY_AGENT.port }],
          },
        ]
      : [{ ports: [{ protocol: "TCP", port: endpointPort(o.endpoint) }] }];
  return {
    metadata: { name: o.name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: { podSelector: { matchLabels: { ...o.podSelector } }, policyTypes: ["Egress"], egress },
  };
}

/** Everything a release gains from `restore`: its ConfigMap entry, the pod parts, the egress policy. */
export interface ReleaseRestore {
  files: Record<string, string>;
  pod: RestorePodParts;
  networkPolicy: BuiltNetworkPolicy;
}

export function releaseRestore(o: {
  restore: RestoreSettings | undefined;
  mode: ValkeyMode;
  primaries: number;
  release: string;
  namespace: string;
  valkeyImage: string;
  headless: string;
  secretName: string | undefined;
  podSelector: Record<string, string>;
}): ReleaseRestore | undefined {
  if (o.restore === undefined) return undefined;
  return {
    files: restoreScriptFiles(o.mode, o.primaries),
    pod: restorePodParts({
      restore: o.restore,
      valkeyImage: o.valkeyImage,
      headless: o.headless,
      namespace: o.namespace,
      secretName: o.secretName,
    }),
    networkPolicy: buildRestoreEgressPolicy({
      name: `${o.release}-restore-egress`,
      namespace: o.namespace,
      release: o.release,
      podSelector: o.podSelector,
      endpoint: o.restore.endpoint,
    }),
  };
}
