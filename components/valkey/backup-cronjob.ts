/**
 * The backup CronJob of a release (config `backup`), pure: a ServiceAccount (the EKS Pod Identity
 * association's subject: no static keys), a ConfigMap with backup.sh (pod/backup-script.ts), and
 * the CronJob. Each run is one pod in two steps over an emptyDir: the init container (the Valkey
 * image: valkey-cli, valkey-check-rdb) runs `backup.sh snapshot-from MODE SEED 6379` (the plan from
 * the live topology, then `valkey-cli --rdb` from each shard's chosen replica), and the container
 * (an AWS CLI >= 2.15 image) runs `backup.sh upload MODE`, the manifest last: on eks with Pod
 * Identity's credentials, on byo with the keys of `backup.credentialsSecret` and `backup.endpoint`. The pod carries the
 * client label, so the release's NetworkPolicy admits it to 6379; the password reaches valkey-cli
 * through VALKEYCLI_AUTH / REDISCLI_AUTH from the Secret, never argv. Runs never overlap (Forbid).
 */
import type { BackupConfig, ValkeyMode } from "../../config/types.js";
import { BACKUP_ENV, BACKUP_SCRIPT, backupPod, type BackupPodDefinition } from "../../pod/backup-pod.js";
import { VALKEY_PORT } from "../../vocabulary/ports.js";
import { CLIENT_LABEL, releaseLabels, type Placement } from "../shared.js";
import type { ConfigMap, Container, CronJob, ServiceAccount } from "./k8s-types.js";
import { cliAuthEnv, stepContainer } from "./pod-env.js";
import { hardenedPod, restrictedContainer } from "./pod-security.js";
import { VALKEY_UID } from "./statefulset.js";

export const BACKUP_SCRIPT_KEY = BACKUP_SCRIPT;
/** `app.kubernetes.io/name` of the backup objects and pods. */
export const BACKUP_POD_NAME = "valkey-backup";
/** The ConfigMap key holding `s3://bucket/prefix` (the component sets it when the bucket is created). */
export const BACKUP_URI_KEY = "backup-uri";
const SCRIPT_MOUNT = "/etc/valkey-backup";
const WORK_DIR = "/work";

export interface BackupCronJobInput {
  namespace: string;
  release: string;
  mode: ValkeyMode;
  backup: BackupConfig;
  /** The bucket when it is known now (`backup.bucket`); undefined: the caller adds BACKUP_URI_KEY to the ConfigMap. */
  bucket: string | undefined;
  /** Where the plan starts: the client Service (cluster) or the write Service (replication). */
  seedHost: string;
  /**
   * The bucket's region (`aws.region`): the CLI finds no region by itself in a pod (Pod Identity gives credentials
   * only).
   */
  region: string;
  valkeyImage: string;
  /** Password Secret; undefined = auth off. */
  secretName: string | undefined;
  placement: Pick<Placement, "nodeSelector" | "tolerations">;
}

export interface BackupManifests {
  serviceAccount: ServiceAccount;
  configMap: ConfigMap;
  cronJob: CronJob;
}

/** Names of the backup objects of a release. */
export function backupNames(release: string): { serviceAccount: string; configMap: string; cronJob: string } {
  return { serviceAccount: `${release}-backup`, configMap: `${release}-backup`, cronJob: `${release}-backup` };
}

/** Where a backup run writes: `s3://bucket/prefix` (each run under `/<UTC time>/`). */
export function backupUri(bucket: string, prefix: string): string {
  return `s3://${bucket}/${prefix}`;
}

type BackupNames = ReturnType<typeof backupNames>;
type VolumeMounts = NonNullable<Container["volumeMounts"]>;

/** The backup pods' labels. */
function backupLabels(release: string): Record<string, string> {
  // Not the members' `app.kubernetes.io/name: valkey`: the release's selectors (the StatefulSet's,
  // the client Service's, the PDB's, the members' NetworkPolicy, the checks' discovery) match on
  // it, and a backup pod among them would be a Service endpoint and be held to the members' egress
  // (DNS and members only: no S3). Found on real pods: the upload timed out.
  return {
    ...releaseLabels(release),
    "app.kubernetes.io/name": BACKUP_POD_NAME,
    "app.kubernetes.io/component": "backup",
  };
}

/** The init container: `backup.sh snapshot-from` with valkey-cli, into the work dir. */
function snapshotContainer(i: BackupCronJobInput, pod: BackupPodDefinition, mounts: VolumeMounts): Container {
  return stepContainer(
    "backup container",
    {
      name: "snapshot",
      image: i.valkeyImage,
      env: [
        { name: BACKUP_ENV.workDir, value: WORK_DIR },
        { name: BACKUP_ENV.allowPrimary, value: i.backup.allowPrimary ? "1" : "0" },
        ...cliAuthEnv(i.secretName),
      ],
      volumeMounts: mounts,
      securityContext: restrictedContainer(),
    },
    pod.snapshot,
  );
}

/** The container: `backup.sh upload` with the AWS CLI, the manifest last. */
function uploadContainer(
  i: BackupCronJobInput,
  pod: BackupPodDefinition,
  names: BackupNames,
  mounts: VolumeMounts,
): Container {
  const container = stepContainer(
    "backup container",
    {
      name: "upload",
      image: i.backup.awsCliImage,
      env: [
        { name: BACKUP_ENV.workDir, value: WORK_DIR },
        { name: BACKUP_ENV.uri, valueFrom: { configMapKeyRef: { name: names.configMap, key: BACKUP_URI_KEY } } },
        { name: "AWS_REGION", value: i.region },
        // byo: an S3-compatible server (backup.sh passes it as --endpoint-url).
        ...(i.backup.endpoint === undefined ? [] : [{ name: BACKUP_ENV.endpoint, value: i.backup.endpoint }]),
        // The CLI caches under $HOME; the root filesystem is read-only.
        { name: "HOME", value: WORK_DIR },
      ],
      volumeMounts: mounts,
      securityContext: restrictedContainer(),
    },
    pod.upload,
  );
  return {
    ...container,
    // byo: the keys from the user's own Secret (eks: none, Pod Identity gives the credentials).
    ...(i.backup.credentialsSecret === undefined
      ? {}
      : { envFrom: [{ secretRef: { name: i.backup.credentialsSecret } }] }),
  };
}

/** The CronJob: one pod per run, never two at once. */
function backupCronJob(
  i: BackupCronJobInput,
  names: BackupNames,
  labels: Record<string, string>,
  containers: { snapshot: Container; upload: Container },
): CronJob {
  return {
    metadata: { name: names.cronJob, namespace: i.namespace, labels },
    spec: {
      schedule: i.backup.schedule,
      timeZone: "Etc/UTC",
      concurrencyPolicy: "Forbid",
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels },
        spec: {
          backoffLimit: 1,
          template: {
            metadata: { labels: { ...labels, [CLIENT_LABEL]: "true" } },
            spec: {
              ...hardenedPod(VALKEY_UID, 30),
              serviceAccountName: names.serviceAccount,
              restartPolicy: "Never",
              nodeSelector: { ...i.placement.nodeSelector },
              tolerations: i.placement.tolerations.map((t) => ({ ...t })),
              initContainers: [containers.snapshot],
              containers: [containers.upload],
              volumes: [
                { name: "script", configMap: { name: names.configMap, defaultMode: 0o444 } },
                { name: "work", emptyDir: {} },
              ],
            },
          },
        },
      },
    },
  };
}

export function buildBackupManifests(i: BackupCronJobInput): BackupManifests {
  const names = backupNames(i.release);
  const labels = backupLabels(i.release);
  const mounts = [
    { name: "script", mountPath: SCRIPT_MOUNT, readOnly: true },
    { name: "work", mountPath: WORK_DIR },
  ];
  const pod = backupPod({
    mode: i.mode,
    from: { seed: { host: i.seedHost, port: VALKEY_PORT } },
    configDir: SCRIPT_MOUNT,
  });
  const snapshot = snapshotContainer(i, pod, mounts);
  const upload = uploadContainer(i, pod, names, mounts);
  return {
    serviceAccount: {
      metadata: { name: names.serviceAccount, namespace: i.namespace, labels },
      automountServiceAccountToken: false,
    },
    configMap: {
      metadata: { name: names.configMap, namespace: i.namespace, labels },
      data: {
        ...pod.files,
        ...(i.bucket === undefined ? {} : { [BACKUP_URI_KEY]: backupUri(i.bucket, i.backup.prefix) }),
      },
    },
    cronJob: backupCronJob(i, names, labels, { snapshot, upload }),
  };
}
