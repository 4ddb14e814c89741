/**
 * The shellcheck lint step over the rendered pod scripts (tests/support/shellcheck-pod-scripts.ts,
 * run by `npm run lint`) cannot pass silently: it reports a finding in a deliberately bad script,
 * naming the script and its option set, honours a `# shellcheck disable` line, accepts an ACCEPTED
 * finding only on its script, code and line, and the scripts it renders include at least
 * readiness.sh, start.sh and restore.sh of both modes.
 */
import { describe, expect, it } from "vitest";
import {
  ACCEPTED,
  renderedPodScripts,
  shellcheckMissing,
  shellcheckScripts,
} from "../support/shellcheck-pod-scripts.js";

describe("shellcheck over the rendered pod scripts", () => {
  it("has shellcheck (.ci/setup installs it)", () => {
    expect(shellcheckMissing()).toBeUndefined();
  });

  it("reports a finding in a bad script, naming the script and the option set", () => {
    const bad = { script: "bad.sh", variant: "cluster auth=true", text: '#!/bin/sh\nx="$1"\necho $x\n' };
    const r = shellcheckScripts([bad]);
    expect(r.variants).toBe(1);
    expect(r.distinct).toBe(1);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatch(/^bad\.sh \[cluster auth=true\]:3:6: .*\[SC2086\]$/);
  });

  it("honours a disable line in the rendered text", () => {
    const text = '#!/bin/sh\nx="$1"\n# shellcheck disable=SC2086 # split on purpose\necho $x\n';
    expect(shellcheckScripts([{ script: "ok.sh", variant: "v", text }]).findings).toEqual([]);
  });

  it("accepts an ACCEPTED finding only on its script, code and line; every entry says why", () => {
    // SC2154 (referenced, never assigned) on restore.sh's `local_cli() {` line is accepted.
    const text = (fn: string) => `#!/bin/sh\nset -u\n${fn}() { echo "$cli_timeout"; }\n${fn}\n`;
    const restore = shellcheckScripts([{ script: "restore.sh", variant: "v", text: text("local_cli") }]);
    expect([restore.findings, restore.accepted]).toEqual([[], 1]);
    // The same construct on another line, or in another script, still fails.
    expect(shellcheckScripts([{ script: "restore.sh", variant: "v", text: text("other_cli") }]).findings).toHaveLength(
      1,
    );
    expect(shellcheckScripts([{ script: "start.sh", variant: "v", text: text("local_cli") }]).findings).toHaveLength(1);
    // An entry that matched nothing is reported stale.
    expect(restore.unused).not.toContain(`restore.sh SC2154 "local_cli() {"`);
    expect(restore.unused.length).toBe(ACCEPTED.length - 1);
    for (const a of ACCEPTED) expect(a.why.length, `${a.script} ${a.code}`).toBeGreaterThan(10);
  });

  it("renders readiness.sh, start.sh and restore.sh of both modes, among others", () => {
    const scripts = renderedPodScripts();
    expect(scripts.length).toBeGreaterThan(0);
    for (const mode of ["cluster", "replication"]) {
      for (const script of ["readiness.sh", "start.sh", "restore.sh"]) {
        const found = scripts.filter((s) => s.script === script && s.variant.startsWith(`${mode} `));
        expect(found.length, `${script} (${mode})`).toBeGreaterThan(0);
        for (const s of found) expect(s.text.length, `${script} [${s.variant}]`).toBeGreaterThan(0);
      }
    }
    for (const script of [
      "prestop.sh",
      "heal.sh",
      "rejoin.sh",
      "failback.sh",
      "sentinel-start.sh",
      "backup.sh",
      "fault-agent.sh",
      "benchmark-job.sh",
    ]) {
      expect(
        scripts.some((s) => s.script === script),
        script,
      ).toBe(true);
    }
  });
});
