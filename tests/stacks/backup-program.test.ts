/**
 * `backup.enabled` in the program under Pulumi mocks: the bucket the stack creates (encryption,
 * versioning, public access blocked, the retention lifecycle rule), the Pod Identity role (put, get,
 * list under the prefix only) and association of the backup ServiceAccount, the CronJob's two
 * steps (snapshot in the Valkey image from the live plan, upload in the AWS CLI image), the
 * password only through Secret references; an existing bucket creates no bucket.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";
import { versions } from "../../versions.js";

const recorder = installMocks({ invokes: awsMockInvokes, outputs: awsMockOutputs });
const { loadStackFile } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const pulumi = await import("@pulumi/pulumi");

const PASSWORD = "pw-backup-9Zq!unique";
const REGION = loadStackFile("stacks/Pulumi.cluster.yaml").config.aws.region;
beforeEach(() => recorder.reset());

// The byo stack reads its kubeconfig at run time: an empty one will do under mocks.
const kubeconfigPath = join(mkdtempSync(join(tmpdir(), "backup-program-")), "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

async function program(file: string, backup: Record<string, unknown>): Promise<void> {
  const { config } = loadStackFile(file);
  config.backup = { ...config.backup, enabled: true, ...backup };
  if (config.platform === "byo") config.byo = { ...config.byo, kubeconfig: kubeconfigPath };
  runProgram({ stack: "s", config, password: pulumi.secret(PASSWORD) });
  await settle();
}

/**
 * The backup pod matches no selector of the release: not the StatefulSets' (adoption, spread),
 * the Services' (it would be an endpoint), the PDBs' or the NetworkPolicies' (the members' egress
 * allows DNS and members only: the upload to S3 would be dropped, as it was on real pods).
 */
function expectOutsideReleaseSelectors(cron: Spec): void {
  const labels = (cron.jobTemplate.spec.template as unknown as { metadata: { labels: Record<string, string> } })
    .metadata.labels;
  const selectors = recorder.resources.flatMap((r) => {
    const spec = r.inputs.spec as
      Record<string, { matchLabels?: Record<string, string> } & Record<string, string>> | undefined;
    if (spec === undefined) return [];
    if (r.type.endsWith(":StatefulSet") || r.type.endsWith(":PodDisruptionBudget"))
      return [{ what: `${r.type} ${r.name}`, sel: spec.selector?.matchLabels }];
    if (r.type.endsWith(":Service")) return [{ what: `${r.type} ${r.name}`, sel: spec.selector }];
    if (r.type.endsWith(":NetworkPolicy")) return [{ what: `${r.type} ${r.name}`, sel: spec.podSelector?.matchLabels }];
    return [];
  });
  expect(selectors.length).toBeGreaterThan(3);
  for (const { what, sel } of selectors) {
    if (sel === undefined) continue;
    expect(
      Object.entries(sel).every(([k, v]) => labels[k] === v),
      `${what} selects the backup pod`,
    ).toBe(false);
  }
}

type Spec = {
  jobTemplate: { spec: { template: { spec: Record<string, unknown> } } };
  schedule: string;
  concurrencyPolicy: string;
};
type C = {
  name: string;
  image: string;
  command: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
};

describe("backup in the program", () => {
  it("cluster stack: a bucket of its own, the Pod Identity role and association, the two-step CronJob", async () => {
    await program("stacks/Pulumi.cluster.yaml", { retentionDays: 7, schedule: "5 2 * * *" });
    const types = recorder.resources.map((r) => r.type);
    for (const t of [
      "aws:s3/bucket:Bucket",
      "aws:s3/bucketVersioning:BucketVersioning",
      "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
      "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
      "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
      "aws:eks/podIdentityAssociation:PodIdentityAssociation",
      "kubernetes:batch/v1:CronJob",
    ])
      expect(types, t).toContain(t);
    const lifecycle = recorder.get(
      "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
      "valkey-backup-storage-retention",
    ).inputs;
    expect(lifecycle.rules).toEqual([
      expect.objectContaining({
        status: "Enabled",
        filter: { prefix: "valkey-on-eks/" },
        expiration: { days: 7 },
        noncurrentVersionExpiration: { noncurrentDays: 7 },
      }),
    ]);
    expect(
      recorder.get("aws:s3/bucketVersioning:BucketVersioning", "valkey-backup-storage-versioning").inputs
        .versioningConfiguration,
    ).toEqual({
      status: "Enabled",
    });
    const assoc = recorder.get(
      "aws:eks/podIdentityAssociation:PodIdentityAssociation",
      "valkey-backup-storage-identity",
    ).inputs;
    expect(assoc).toMatchObject({ namespace: "valkey", serviceAccount: "valkey-cluster-backup" });
    const policy = JSON.parse(
      recorder.get("aws:iam/rolePolicy:RolePolicy", "valkey-backup-storage-access").inputs.policy as string,
    ) as {
      Statement: { Action: string | string[]; Resource: string }[];
    };
    expect(policy.Statement.map((s) => s.Action)).toEqual([["s3:PutObject", "s3:GetObject"], "s3:ListBucket"]);
    expect(policy.Statement[0]?.Resource).toMatch(/\/valkey-on-eks\/\*$/);

    const cron = recorder.get("kubernetes:batch/v1:CronJob", "valkey-backup-cronjob").inputs.spec as Spec;
    expect(cron).toMatchObject({ schedule: "5 2 * * *", concurrencyPolicy: "Forbid" });
    const pod = cron.jobTemplate.spec.template.spec as {
      serviceAccountName: string;
      initContainers: C[];
      containers: C[];
    };
    expect(pod.serviceAccountName).toBe("valkey-cluster-backup");
    const [snapshot] = pod.initContainers;
    const [upload] = pod.containers;
    expect(snapshot?.command).toEqual([
      "sh",
      "/etc/valkey-backup/backup.sh",
      "snapshot-from",
      "cluster",
      "valkey-cluster.valkey.svc.cluster.local",
      "6379",
    ]);
    expect(upload?.image).toBe(versions.AWS_CLI_IMAGE);
    expect(upload?.command).toEqual(["sh", "/etc/valkey-backup/backup.sh", "upload", "cluster"]);
    // The stack's region: in a pod the CLI finds none by itself.
    expect(upload?.env.find((e) => e.name === "AWS_REGION")?.value).toBe(REGION);
    expect(snapshot?.env.find((e) => e.name === "REDISCLI_AUTH")?.valueFrom).toEqual({
      secretKeyRef: { name: "valkey-cluster-auth", key: "password" },
    });
    const data = recorder.get("kubernetes:core/v1:ConfigMap", "valkey-backup-script").inputs.data as Record<
      string,
      string
    >;
    expect(data["backup-uri"]).toMatch(/^s3:\/\/.+\/valkey-on-eks$/);
    expect(data["backup.sh"]).toContain("snapshot_from()");
    for (const r of recorder.resources)
      expect(JSON.stringify(r.redacted), `${r.type} ${r.name}`).not.toContain(PASSWORD);
    expectOutsideReleaseSelectors(cron);
  });

  it("replication stack with an existing bucket: no bucket created, the policy names it, the seed is the write Service", async () => {
    await program("stacks/Pulumi.replication.yaml", { bucket: "team-backups", prefix: "prod/valkey" });
    expect(recorder.resources.some((r) => r.type === "aws:s3/bucket:Bucket")).toBe(false);
    const policy = recorder.get("aws:iam/rolePolicy:RolePolicy", "valkey-backup-storage-access").inputs
      .policy as string;
    expect(policy).toContain("arn:aws:s3:::team-backups/prod/valkey/*");
    const data = recorder.get("kubernetes:core/v1:ConfigMap", "valkey-backup-script").inputs.data as Record<
      string,
      string
    >;
    expect(data["backup-uri"]).toBe("s3://team-backups/prod/valkey");
    const cron = recorder.get("kubernetes:batch/v1:CronJob", "valkey-backup-cronjob").inputs.spec as Spec;
    const pod = cron.jobTemplate.spec.template.spec as { initContainers: C[] };
    expect(pod.initContainers[0]?.command.slice(3)).toEqual([
      "replication",
      "valkey-write.valkey.svc.cluster.local",
      "6379",
    ]);
    expectOutsideReleaseSelectors(cron);
  });

  it("byo stack: no AWS resource; the upload step reaches the endpoint with the keys of the user's Secret, never values of its own", async () => {
    const endpoint = "http://minio.storage:9000";
    await program("stacks/Pulumi.byo.yaml", { bucket: "team-backups", endpoint, credentialsSecret: "s3-keys" });
    expect(recorder.resources.filter((r) => r.type.startsWith("aws:")).map((r) => r.type)).toEqual([]);
    const data = recorder.get("kubernetes:core/v1:ConfigMap", "valkey-backup-script").inputs.data as Record<
      string,
      string
    >;
    expect(data["backup-uri"]).toBe("s3://team-backups/valkey-on-eks");
    const cron = recorder.get("kubernetes:batch/v1:CronJob", "valkey-backup-cronjob").inputs.spec as Spec;
    const pod = cron.jobTemplate.spec.template.spec as { containers: (C & { envFrom?: unknown })[] };
    const [upload] = pod.containers;
    expect(upload?.env.find((e) => e.name === "AWS_ENDPOINT_URL")?.value).toBe(endpoint);
    expect(upload?.envFrom).toEqual([{ secretRef: { name: "s3-keys" } }]);
    expect(upload?.env.map((e) => e.name)).not.toContain("AWS_SECRET_ACCESS_KEY");
  });
});
