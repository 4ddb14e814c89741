/**
 * BackupStorage (platform eks): where the backup CronJob writes and how it is allowed to, without
 * static keys. When no bucket is given, one is created: SSE-S3 encryption, versioning, public
 * access blocked, a lifecycle rule expiring current and noncurrent objects under the prefix after
 * `retentionDays` (and aborting incomplete uploads after a day); it is KEPT on `pulumi destroy`
 * (retainOnDelete), so the backups outlive the stack and can restore a new one. Then an IAM role
 * assumable through EKS Pod Identity, allowed to put, get and list under the prefix only, and
 * the Pod Identity association of the backup ServiceAccount with it.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { podIdentityTrustPolicy, type PolicyDocument } from "./iam.js";

/** What the backup and restore scripts may do: objects under `<prefix>/` and listing that prefix, nothing else. */
export function backupAccessPolicy(bucketArn: string, prefix: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "BackupObjects",
        Effect: "Allow",
        Action: ["s3:PutObject", "s3:GetObject"],
        Resource: `${bucketArn}/${prefix}/*`,
      },
      {
        Sid: "BackupList",
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: bucketArn,
        Condition: { StringLike: { "s3:prefix": [`${prefix}/*`] } },
      },
    ],
  };
}

/** The lifecycle rule of a bucket the stack creates. */
export function retentionRule(
  prefix: string,
  retentionDays: number,
): aws.types.input.s3.BucketLifecycleConfigurationRule {
  return {
    id: "valkey-backup-retention",
    status: "Enabled",
    filter: { prefix: `${prefix}/` },
    expiration: { days: retentionDays },
    noncurrentVersionExpiration: { noncurrentDays: retentionDays },
    abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
  };
}

export interface BackupStorageArgs {
  clusterName: pulumi.Input<string>;
  /** The backup pods' namespace and ServiceAccount (the Pod Identity association's subject). */
  namespace: string;
  serviceAccount: string;
  /** An existing bucket; undefined: create one. */
  bucket?: string;
  prefix: string;
  retentionDays: number;
  /** For an existing bucket's ARN. @default "aws" */
  partition?: string;
  tags?: Record<string, string>;
}

export class BackupStorage extends pulumi.ComponentResource {
  public readonly bucketName: pulumi.Output<string>;
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: BackupStorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:aws:BackupStorage", name, {}, opts);
    const parent = { parent: this };
    const tags = { "valkey-on-eks/backup": "true", ...args.tags };
    let bucketName: pulumi.Output<string>;
    let bucketArn: pulumi.Output<string>;
    if (args.bucket === undefined) {
      const bucket = new aws.s3.Bucket(
        `${name}-bucket`,
        { bucketPrefix: "valkey-backup-", tags },
        { ...parent, retainOnDelete: true },
      );
      const b = { bucket: bucket.id };
      const kept = { ...parent, retainOnDelete: true };
      new aws.s3.BucketPublicAccessBlock(
        `${name}-public-access`,
        { ...b, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
        kept,
      );
      new aws.s3.BucketServerSideEncryptionConfiguration(
        `${name}-encryption`,
        { ...b, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }] },
        kept,
      );
      new aws.s3.BucketVersioning(`${name}-versioning`, { ...b, versioningConfiguration: { status: "Enabled" } }, kept);
      new aws.s3.BucketLifecycleConfiguration(
        `${name}-retention`,
        { ...b, rules: [retentionRule(args.prefix, args.retentionDays)] },
        kept,
      );
      bucketName = bucket.id;
      bucketArn = bucket.arn;
    } else {
      bucketName = pulumi.output(args.bucket);
      bucketArn = pulumi.output(`arn:${args.partition ?? "aws"}:s3:::${args.bucket}`);
    }
    const role = new aws.iam.Role(
      `${name}-role`,
      { assumeRolePolicy: JSON.stringify(podIdentityTrustPolicy()), tags },
      parent,
    );
    new aws.iam.RolePolicy(
      `${name}-access`,
      { role: role.name, policy: bucketArn.apply((arn) => JSON.stringify(backupAccessPolicy(arn, args.prefix))) },
      parent,
    );
    new aws.eks.PodIdentityAssociation(
      `${name}-identity`,
      {
        clusterName: args.clusterName,
        namespace: args.namespace,
        serviceAccount: args.serviceAccount,
        roleArn: role.arn,
        tags,
      },
      parent,
    );
    this.bucketName = bucketName;
    this.roleArn = role.arn;
    this.registerOutputs({ bucketName, roleArn: role.arn });
  }
}
