/**
 * Every IAM policy document the AWS builders write, at test values (account 123456789012,
 * us-west-2, cluster valkey-test): each role's trust policy and inline policies, and the
 * interruption queue's resource policy. One list for the tests that send them to moto
 * (tests/components/aws-shapes-moto.test.ts) and lint them (tests/components/iam-lint.test.ts).
 */
import { backupAccessPolicy } from "../../components/aws/backup-storage.js";
import { ec2TrustPolicy, podIdentityTrustPolicy, type PolicyDocument } from "../../components/aws/iam.js";
import { buildKarpenterControllerPolicy } from "../../components/aws/karpenter-iam.js";
import { buildInterruptionQueuePolicy } from "../../components/aws/karpenter-interruption.js";
import { restoreAccessPolicy } from "../../components/aws/restore-access.js";

export const TEST_ACCOUNT = "123456789012";
export const TEST_REGION = "us-west-2";
export const TEST_QUEUE_ARN = `arn:aws:sqs:${TEST_REGION}:${TEST_ACCOUNT}:valkey-test`;
const nodeRoleArn = `arn:aws:iam::${TEST_ACCOUNT}:role/valkey-test-node`;

export interface TestRole {
  name: string;
  trust: PolicyDocument;
  /** Inline policies by name (aws.iam.RolePolicy). */
  inline: Record<string, PolicyDocument>;
}

export const TEST_ROLES: readonly TestRole[] = [
  {
    name: "karpenter-controller",
    trust: podIdentityTrustPolicy(),
    inline: {
      controller: buildKarpenterControllerPolicy({
        partition: "aws",
        region: TEST_REGION,
        accountId: TEST_ACCOUNT,
        clusterName: "valkey-test",
        queueArn: TEST_QUEUE_ARN,
        nodeRoleArn,
      }),
    },
  },
  { name: "valkey-test-node", trust: ec2TrustPolicy(), inline: {} },
  {
    name: "backup",
    trust: podIdentityTrustPolicy(),
    inline: { backup: backupAccessPolicy("arn:aws:s3:::valkey-backups", "valkey-test/") },
  },
  {
    name: "restore",
    trust: podIdentityTrustPolicy(),
    inline: { restore: restoreAccessPolicy("aws", "s3://valkey-backups/valkey-test/2026-11-29T00-00-00Z/") },
  },
];

/** The interruption queue's resource policy. */
export const TEST_QUEUE_POLICY: PolicyDocument = buildInterruptionQueuePolicy(TEST_QUEUE_ARN);
