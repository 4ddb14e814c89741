/**
 * RestoreAccess (platform eks, config `restore.from`): how the members' restore-fetch init
 * container reads its backup without static keys. An IAM role assumable through EKS Pod Identity,
 * allowed s3:GetObject under that one backup (`<prefix>/<backup id>/`) and s3:ListBucket of it,
 * nothing else; and the Pod Identity association of the members' ServiceAccount
 * (valkey/restore-init.ts restoreServiceAccountName) with it.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { parseRestoreUri } from "../../config/backup-section.js";
import { podIdentityTrustPolicy, type PolicyDocument } from "./iam.js";

/** Read-only access to one backup: its objects and the listing of its key prefix. */
export function restoreAccessPolicy(partition: string, from: string): PolicyDocument {
  const { bucket, key } = parseRestoreUri(from);
  const bucketArn = `arn:${partition}:s3:::${bucket}`;
  return {
    Version: "2012-10-17",
    Statement: [
      { Sid: "RestoreObjects", Effect: "Allow", Action: "s3:GetObject", Resource: `${bucketArn}/${key}/*` },
      {
        Sid: "RestoreList",
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: bucketArn,
        Condition: { StringLike: { "s3:prefix": [`${key}/*`] } },
      },
    ],
  };
}

export interface RestoreAccessArgs {
  clusterName: pulumi.Input<string>;
  /** The members' namespace and ServiceAccount (the association's subject). */
  namespace: string;
  serviceAccount: string;
  /** `restore.from`. */
  from: string;
  /** @default "aws" */
  partition?: string;
}

export class RestoreAccess extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: RestoreAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:aws:RestoreAccess", name, {}, opts);
    const parent = { parent: this };
    const tags = { "valkey-on-eks/restore": "true" };
    const role = new aws.iam.Role(
      `${name}-role`,
      { assumeRolePolicy: JSON.stringify(podIdentityTrustPolicy()), tags },
      parent,
    );
    new aws.iam.RolePolicy(
      `${name}-access`,
      { role: role.name, policy: JSON.stringify(restoreAccessPolicy(args.partition ?? "aws", args.from)) },
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
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: role.arn });
  }
}
