/**
 * The rendered backup.sh and restore.sh: valid sh, bad options named, no password or key in them.
 * Their behaviour against real valkey-server processes and a real S3-compatible server is tested by
 * tests/core/backup-restore.test.ts.
 */
import { describe, expect, it } from "vitest";
import { renderBackupScript } from "../../pod/backup-script.js";
import { renderRestoreScript } from "../../pod/restore-script.js";
import { plannedRanges } from "../../benchmarks/backup/restore-check.js";
import { run } from "../support/valkey-fixtures.js";

describe("backup.sh and restore.sh", () => {
  it("render scripts sh accepts, without credentials", async () => {
    const scripts = [
      renderBackupScript(),
      renderRestoreScript({ mode: "cluster", plannedSlots: plannedRanges(3) }),
      renderRestoreScript({ mode: "replication" }),
    ];
    for (const s of scripts) {
      await run("sh", ["-n", "-c", s]);
      expect(s).not.toMatch(/-a |--pass|AWS_SECRET_ACCESS_KEY|aws_access_key/i);
    }
    expect(scripts[1]).toContain(`1) printf '%s' '5461-10921' ;;`);
    // The AOF base: with appendonly yes, Valkey ignores a lone dump.rdb and starts empty.
    expect(scripts[1]).toContain("file appendonly.aof.1.base.rdb seq 1 type b");
  });

  it("names bad options", () => {
    expect(() => renderBackupScript({ transferTimeoutSeconds: 0 })).toThrow(
      /transferTimeoutSeconds must be a whole number >= 1/,
    );
    expect(() => renderRestoreScript({ mode: "cluster" })).toThrow(/cluster mode needs plannedSlots/);
    expect(() => renderRestoreScript({ mode: "cluster", plannedSlots: [["0-x"]] })).toThrow(/slot ranges like 0-5460/);
  });
});
