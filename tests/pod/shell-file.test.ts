/**
 * Pod scripts as shell files (pod/shell-file.ts): every pod/scripts/*.sh file is read as it is in
 * the tree; its `# @values` names are filled from exactly the values given (a missing or an extra
 * one refused, naming the script and the key); `# @include` pulls in a shared file's lines.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { declaredValues, renderShellFile, SHELL_DIR, shellFile } from "../../pod/shell-file.js";
import { renderPreStopScript } from "../../pod/prestop-script.js";
import { renderReadinessScript } from "../../pod/readiness-script.js";

describe("pod scripts as shell files", () => {
  it("fills the declared values in order, quoting what sh would expand, and expands includes", () => {
    const text = renderShellFile("readiness.sh", {
      mode: "cluster",
      restore: "no",
      port: 7001,
      local_host: "127.0.0.9",
      cli_timeout: 2,
    });
    expect(text.split("\n").slice(0, 8)).toEqual([
      "#!/bin/sh",
      "# Readiness probe of a Valkey pod (pod/scripts/readiness.sh in valkey-on-eks). Exit 0 = ready.",
      "set -u",
      "mode='cluster'",
      "restore='no'",
      "port=7001",
      "local_host='127.0.0.9'",
      "cli_timeout=2",
    ]);
    expect(text).toContain(`cli_bin="\${VALKEY_CLI:-valkey-cli}"`);
    expect(text).not.toMatch(/^# @/m);
    expect(renderReadinessScript({ mode: "cluster", port: 7001, localHost: "127.0.0.9" })).toBe(text);
  });

  it("refuses a value the script does not declare, and a declared one left out, naming both", () => {
    const ok = { mode: "cluster", restore: "no", port: 1, local_host: "h", cli_timeout: 1 };
    expect(() => renderShellFile("readiness.sh", { ...ok, extra: 1 })).toThrow(
      "readiness.sh: extra given but not declared by its # @values",
    );
    const { port: _port, ...short } = ok;
    expect(() => renderShellFile("readiness.sh", short)).toThrow(
      "readiness.sh: no value for port (declared by its # @values)",
    );
    expect(() => shellFile("../secret.sh")).toThrow(/must be <lowercase-name>\.sh/);
  });

  it("every shell file of pod/scripts is used: its values declared and its includes present", () => {
    const files = readdirSync(SHELL_DIR).sort();
    expect(files).toEqual([
      "backup.sh",
      "benchmark-job.sh",
      "cluster-failback.sh",
      "cluster-heal.sh",
      "cluster-prestop.sh",
      "cluster-rejoin.sh",
      "failback-decision.awk",
      "failback-round.awk",
      "fault-agent.sh",
      "lib-ask-myids.sh",
      "lib-backup-plan.sh",
      "lib-cli.sh",
      "lib-conf-secret.sh",
      "lib-deadline.sh",
      "lib-flat-field.sh",
      "lib-hook-log.sh",
      "lib-proven.sh",
      "lib-s3.sh",
      "lib-wait-ping.sh",
      "myid-answers.awk",
      "readiness.sh",
      "replication-prestop.sh",
      "replication-start.sh",
      "restore.sh",
      "sentinel-start.sh",
      "start.sh",
    ]);
    const included = new Set<string>();
    for (const f of files) {
      for (const inc of shellFile(f).matchAll(/^# @include (\S+)$/gm)) {
        expect(files, f).toContain(inc[1]);
        included.add(inc[1] as string);
      }
    }
    // A file is either included by another or rendered with values of its own.
    for (const f of files.filter((x) => !included.has(x) && x.endsWith(".sh")))
      expect(declaredValues(shellFile(f)).length, f).toBeGreaterThan(0);
    for (const f of files.filter((x) => x.startsWith("lib-") || x.endsWith(".awk")))
      expect(included.has(f), `${f} is included by a script`).toBe(true);
    expect(renderPreStopScript()).toContain("max_lag=1048576\n");
  });
});
