/**
 * The rendered backup.sh and restore.sh: valid sh, bad options named, no password or key in them.
 * Their behaviour against real valkey-server processes and a real S3-compatible server is tested by
 * tests/core/backup-restore.test.ts.
 */
import { describe, expect, it } from "vitest";
import { renderBackupScript } from "../../pod/backup-script.js";
import { renderRestoreScript } from "../../pod/restore-script.js";
import { plannedRanges } from "../../core/backup/restore-check.js";
import { RESTORE_MESSAGE_ENV } from "../../pod/restore-message.js";
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
    expect(scripts[1]).toMatch(/^planned_slots='0-5460 5461-10921 10922-16383'$/m);
    expect(scripts[1]).toMatch(/^planned_shards=3$/m);
    // The AOF base: with appendonly yes, Valkey ignores a lone dump.rdb and starts empty.
    expect(scripts[1]).toMatch(/^aof_base='appendonly\.aof\.1\.base\.rdb'$/m);
    expect(scripts[1]).toContain(`printf 'file %s seq 1 type b\\n' "$aof_base"`);
    // The message file's variable is the one the pod spec sets (restore-message.ts).
    for (const s of scripts.slice(1)) expect(s).toContain(`msg_file="\${${RESTORE_MESSAGE_ENV}:-$msg_file_default}"`);
  });

  it("names bad options", () => {
    expect(() => renderBackupScript({ transferTimeoutSeconds: 0 })).toThrow(
      /transferTimeoutSeconds must be a whole number >= 1/,
    );
    expect(() => renderRestoreScript({ mode: "cluster" })).toThrow(/cluster mode needs plannedSlots/);
    expect(() => renderRestoreScript({ mode: "cluster", plannedSlots: [["0-x"]] })).toThrow(/slot ranges like 0-5460/);
  });
});
