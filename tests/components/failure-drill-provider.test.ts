/**
 * FailureDrill's serialized provider in a plain node process (as Pulumi's dynamic-provider
 * process runs it): it loads the implementation through the kit's tsx shell, diffs on the drill
 * settings, and refuses bad inputs naming the key, before touching any cluster.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("the FailureDrill provider, serialized, in a plain node process", () => {
  it("diffs on the drill settings (not on timeoutS) and refuses an unknown fault naming the key", () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), "valkey-drill-shell-"));
    try {
      const serialize = join(dir, "serialize.mts");
      writeFileSync(
        serialize,
        [
          `import * as pulumi from ${JSON.stringify(createRequire(import.meta.url).resolve("@pulumi/pulumi"))};`,
          `import { failureDrillProvider } from ${JSON.stringify(join(root, "components/steps/failure-drill/component.ts"))};`,
          `const provider = failureDrillProvider();`,
          `const sf = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });`,
          `process.stdout.write(sf.text);`,
        ].join("\n"),
      );
      const text = execFileSync(process.execPath, ["--import", "tsx", serialize], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      expect(text).toContain("failure-drill/implementation.ts");
      writeFileSync(join(dir, "provider.js"), text);
      const run = join(dir, "run.cjs");
      writeFileSync(
        run,
        [
          `const load = require(${JSON.stringify(join(root, "node_modules/require-from-string"))});`,
          `const p = load(require("fs").readFileSync(${JSON.stringify(join(dir, "provider.js"))}, "utf8")).handler();`,
          `const same = { namespace: "v", selector: "a=b", faults: ["primary"], rate: 50, timeoutS: 600 };`,
          `const bad = { kubeconfig: "k", namespace: "v", selector: "a=b", mode: "cluster", faults: ["network"], rate: 50, preFaultS: 10, loadS: 90, image: "node:24", loadTarget: { host: "h", port: 6379 }, placement: {} };`,
          `Promise.all([p.diff("id", same, same), p.diff("id", same, { ...same, rate: 60 }), p.diff("id", same, { ...same, timeoutS: 60 }), p.create(bad).then(() => "created", (e) => String(e.message))])`,
          `  .then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stderr.write(String(e)); process.exit(1); });`,
        ].join("\n"),
      );
      const out = execFileSync(process.execPath, [run], { cwd: tmpdir(), encoding: "utf8" });
      const [unchanged, rate, timeout, refused] = JSON.parse(out) as [unknown, { changes: boolean }, { changes: boolean }, string];
      expect(unchanged).toEqual({ changes: false, replaces: [] });
      expect(rate.changes).toBe(true);
      expect(timeout.changes).toBe(false);
      expect(refused).toMatch(/input 'faults\.0' must be one of primary, replica, zone, all, switchover/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
