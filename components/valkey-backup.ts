/**
 * ValkeyBackup (config `backup`): the release's scheduled backups to S3 as a thin
 * ComponentResource over the pure manifests of components/valkey/backup-cronjob.ts
 * (ServiceAccount, ConfigMap with backup.sh, CronJob). On eks also BackupStorage (the bucket when
 * none is given, the Pod Identity role and association; components/aws/backup-storage.ts); on byo
 * the bucket is the user's (`backup.bucket`, on `backup.endpoint`, keys in `backup.credentialsSecret`).
 */
import type * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { BackupStorage } from "./aws/backup-storage.js";
import { BACKUP_URI_KEY, backupUri, buildBackupManifests, type BackupCronJobInput } from "./valkey/backup-cronjob.js";

export type ValkeyBackupArgs = Omit<BackupCronJobInput, "bucket">;

/** Platform eks: where the bucket and the Pod Identity role go. */
export interface BackupAws {
  clusterName: pulumi.Input<string>;
  /** The AWS provider (the bucket, the role, the association). */
  awsProvider: aws.Provider;
  /** For the bucket ARN of an existing `backup.bucket`. @default "aws" */
  partition?: string;
}

export interface ValkeyBackupOptions {
  /** The cluster's Kubernetes provider. */
  k8sProvider: k8s.Provider;
  /** Platform eks; undefined on byo (`backup.bucket` is then required, config/rules.ts). */
  aws?: BackupAws;
  dependsOn?: pulumi.Input<pulumi.Resource>[];
}

export class ValkeyBackup extends pulumi.ComponentResource {
  /** The bucket backups go to. */
  public readonly bucketName: pulumi.Output<string>;
  /** `s3://bucket/prefix`: each run writes under `<uri>/<UTC time>/`. */
  public readonly uri: pulumi.Output<string>;

  constructor(name: string, args: ValkeyBackupArgs, o: ValkeyBackupOptions) {
    super("valkey-on-eks:valkey:Backup", name, {}, { dependsOn: o.dependsOn });
    const m = buildBackupManifests({ ...args, bucket: args.backup.bucket });
    const storage =
      o.aws === undefined
        ? undefined
        : new BackupStorage(
            `${name}-storage`,
            {
              clusterName: o.aws.clusterName,
              namespace: args.namespace,
              serviceAccount: m.serviceAccount.metadata?.name as string,
              bucket: args.backup.bucket,
              prefix: args.backup.prefix,
              retentionDays: args.backup.retentionDays,
              partition: o.aws.partition,
            },
            { parent: this, provider: o.aws.awsProvider },
          );
    const bucket = storage?.bucketName ?? args.backup.bucket;
    if (bucket === undefined) throw new Error("backup.bucket is required without the eks platform's BackupStorage");
    const k8sOpts = { parent: this, provider: o.k8sProvider };
    const uri = pulumi.output(bucket).apply((b) => backupUri(b, args.backup.prefix));
    new k8s.core.v1.ServiceAccount(`${name}-sa`, m.serviceAccount, k8sOpts);
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-script`,
      { ...m.configMap, data: { ...m.configMap.data, [BACKUP_URI_KEY]: uri } },
      k8sOpts,
    );
    new k8s.batch.v1.CronJob(`${name}-cronjob`, m.cronJob, {
      ...k8sOpts,
      dependsOn: [configMap, ...(storage === undefined ? [] : [storage])],
    });
    this.bucketName = pulumi.output(bucket);
    this.uri = uri;
    this.registerOutputs({ bucketName: this.bucketName, uri });
  }
}
