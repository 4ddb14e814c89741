/**
 * The `backup` and `restore` stack-config sections: defaults, field errors naming the key, and the
 * cross-field rules (eks: Pod Identity, byo: the user's bucket and credentials Secret, for the backup and the restore).
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { configIssues } from "../support/stack-config.js";

const joined = (raw: unknown): string =>
  configIssues(raw)
    .map((i) => `${i.path}: ${i.message}`)
    .join("\n");

describe("config backup and restore", () => {
  it("are off by default, with documented defaults", () => {
    const { config } = parseStackConfig({});
    expect(config.backup).toEqual({
      enabled: false,
      schedule: "17 3 * * *",
      prefix: "valkey-on-eks",
      retentionDays: 14,
      allowPrimary: false,
      awsCliImage: versions.AWS_CLI_IMAGE,
    });
    expect(config.restore).toEqual({});
    expect(parseStackConfig({ backup: { enabled: true, bucket: "my-bucket.backups" } }).config.backup.bucket).toBe(
      "my-bucket.backups",
    );
  });

  it.each([
    ["schedule", { backup: { schedule: "@daily" } }, "backup.schedule", "five-field cron"],
    ["bucket", { backup: { bucket: "Bad_Bucket" } }, "backup.bucket", "S3 bucket name"],
    ["prefix", { backup: { prefix: "/abs/" } }, "backup.prefix", "no leading or trailing"],
    ["retention", { backup: { retentionDays: 0 } }, "backup.retentionDays", ""],
    ["restore uri", { restore: { from: "https://x/y" } }, "restore.from", "s3://bucket/prefix/<backup id>"],
    ["endpoint", { platform: "byo", backup: { endpoint: "minio:9000" } }, "backup.endpoint", "http(s) URL"],
    [
      "endpoint scheme",
      { platform: "byo", backup: { endpoint: "ftp://minio:9000" } },
      "backup.endpoint",
      "http(s) URL",
    ],
    [
      "credentials secret",
      { platform: "byo", backup: { credentialsSecret: "Bad_Name" } },
      "backup.credentialsSecret",
      "Secret name",
    ],
  ])("names a bad %s", (_what, raw, path, text) => {
    const issue = configIssues(raw).find((i) => i.path === path);
    expect(issue?.message ?? "(no issue)").toContain(text);
  });

  it("on byo needs the bucket and the credentials Secret; on eks refuses both byo keys", () => {
    const byo = joined({ platform: "byo", byo: { kubeconfig: "k" }, backup: { enabled: true } });
    expect(byo).toMatch(/backup\.bucket: is required on platform byo/);
    expect(byo).toMatch(/backup\.credentialsSecret: is required on platform byo/);
    expect(
      configIssues({
        platform: "byo",
        byo: { kubeconfig: "k" },
        backup: { enabled: true, bucket: "backups", endpoint: "http://10.231.0.1:5000", credentialsSecret: "s3-keys" },
      }).filter((i) => i.path.startsWith("backup")),
    ).toEqual([]);
    const eks = joined({ backup: { enabled: true, endpoint: "http://minio:9000", credentialsSecret: "s3-keys" } });
    expect(eks).toMatch(/backup\.endpoint: is for platform byo/);
    expect(eks).toMatch(/backup\.credentialsSecret: is for platform byo: on eks .* Pod Identity/);
  });

  it("restore.from: accepted on eks; on byo needs the credentials Secret; in cluster mode needs the bootstrap", () => {
    const from = "s3://my-bucket/valkey-on-eks/20261125T031700Z";
    const restoreIssues = (raw: Record<string, unknown>): string[] =>
      configIssues(raw)
        .filter((i) => i.path.startsWith("restore") || i.path.startsWith("backup"))
        .map((i) => `${i.path}: ${i.message}`);
    expect(restoreIssues({ restore: { from } })).toEqual([]);
    expect(restoreIssues({ valkey: { mode: "cluster" }, checks: { bootstrap: false }, restore: { from } })).toEqual([
      "restore.from: needs checks.bootstrap: true in cluster mode: the bootstrap makes the restored members the primaries of their shards",
    ]);
    const byo = { platform: "byo", byo: { kubeconfig: "k" }, restore: { from } };
    expect(restoreIssues(byo).join("\n")).toMatch(
      /backup\.credentialsSecret: is required on platform byo with restore\.from/,
    );
    expect(
      restoreIssues({ ...byo, backup: { endpoint: "http://10.231.0.1:5000", credentialsSecret: "s3-keys" } }),
    ).toEqual([]);
  });
});
