/**
 * The `backup` and `restore` stack-config sections: defaults, field errors naming the key, and the
 * cross-field rules (platform eks for Pod Identity; the deployed restore refused until it is wired).
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
    expect(parseStackConfig({ backup: { enabled: true, bucket: "my-bucket.backups" } }).config.backup.bucket).toBe("my-bucket.backups");
  });

  it.each([
    ["schedule", { backup: { schedule: "@daily" } }, "backup.schedule", "five-field cron"],
    ["bucket", { backup: { bucket: "Bad_Bucket" } }, "backup.bucket", "S3 bucket name"],
    ["prefix", { backup: { prefix: "/abs/" } }, "backup.prefix", "no leading or trailing"],
    ["retention", { backup: { retentionDays: 0 } }, "backup.retentionDays", ""],
    ["restore uri", { restore: { from: "https://x/y" } }, "restore.from", "s3://bucket/prefix/<backup id>"],
  ])("names a bad %s", (_what, raw, path, text) => {
    const issue = configIssues(raw).find((i) => i.path === path);
    expect(issue?.message ?? "(no issue)").toContain(text);
  });

  it("needs platform eks, and refuses the deployed restore until it is wired", () => {
    expect(joined({ platform: "byo", backup: { enabled: true } })).toMatch(/backup\.enabled: needs platform eks/);
    expect(joined({ restore: { from: "s3://my-bucket/valkey-on-eks/20261125T031700Z" } })).toMatch(/restore\.from: the deployed restore is not wired yet/);
  });
});
