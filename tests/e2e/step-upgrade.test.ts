/**
 * Upgrading a deployed stack across the post-deploy steps' change of shape (every step
 * became a component `valkey-on-eks:steps:<Type>` over one `${name}-run` child; before, three
 * were components `valkey-on-eks:checks:<Type>` and three were bare dynamic resources). The
 * steps carry aliases to their former URNs; this checks, under the real engine against the e2e
 * API server, that they hold. A replaced step is not harmless: replacing VolumeRelease runs the
 * old one's delete, which deletes the release's PersistentVolumeClaims, its data.
 *
 * The cluster stack is brought up by the program as it was at STEP_SHAPE_BEFORE (a git worktree
 * of that commit, its own dynamic-provider implementations through $VALKEY_ON_EKS_ROOT), then
 * previewed and updated by this checkout's program: nothing may be replaced or deleted, the
 * PVCs must still be there, and a second update changes nothing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import main from "../../stacks/index.js";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail } from "./support/pulumi-harness.js";

/** The last commit whose steps had the former shapes (valkey-on-eks:checks:*, bare dynamic resources). */
const STEP_SHAPE_BEFORE = "1c0b312";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-secret`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];

const hasCommit = (() => {
  try {
    execFileSync("git", ["cat-file", "-e", `${STEP_SHAPE_BEFORE}^{commit}`], { cwd: ROOT, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const ctx = useE2eContext();
let before: string | undefined;
beforeAll(() => {
  if (!hasCommit) return;
  before = mkdtempSync(join(tmpdir(), "valkey-before-"));
  rmSync(before, { recursive: true });
  execFileSync("git", ["worktree", "add", "--detach", before, STEP_SHAPE_BEFORE], { cwd: ROOT, stdio: "ignore" });
  symlinkSync(join(ROOT, "node_modules"), join(before, "node_modules"));
}, 60_000);
afterAll(() => {
  if (before === undefined) return;
  execFileSync("git", ["worktree", "remove", "--force", before], { cwd: ROOT, stdio: "ignore" });
  if (existsSync(before)) rmSync(before, { recursive: true, force: true });
});

describe("upgrade across the steps' change of shape", () => {
  it.skipIf(!hasCommit)(
    `a cluster stack made by ${STEP_SHAPE_BEFORE}'s program is updated by this one: no step replaced or deleted, the PVCs kept` +
      (hasCommit ? "" : ` (skipped: commit ${STEP_SHAPE_BEFORE} is not in this clone, e.g. a shallow one)`),
    async () => {
      const namespace = "valkey-upgrade";
      const config = {
        ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
        valkey: { namespace, mode: "cluster", cluster: { primaries: 3, replicasPerPrimary: 1 }, ...SMALL_VALKEY_PODS },
        benchmark: { enabled: false },
        checks: { bootstrap: true, verify: true, connector: "direct" },
      };
      const old = (await import(pathToFileURL(join(before as string, "stacks/index.ts")).href)) as {
        default: typeof main;
      };
      let program: () => Promise<Record<string, unknown>> = () => old.default();
      const s = await createStack(ctx.env, config, { password: PASSWORD, program: () => program() });
      const valkeys = standInForPods(ctx.core, namespace, PASSWORD);
      const workspace = s.stack.workspace as unknown as { envVars: Record<string, string> };
      try {
        // The old program, its dynamic providers loading the old implementations.
        workspace.envVars.VALKEY_ON_EKS_ROOT = before as string;
        const first = await s.stack.up({ onOutput: (o) => s.log.push(o) });
        expect(first.summary.result, tail(s.log)).toBe("succeeded");
        const oldTypes = (
          (await s.stack.exportStack()) as { deployment: { resources: { type: string }[] } }
        ).deployment.resources.map((r) => r.type);
        expect(oldTypes).toContain("valkey-on-eks:checks:ClusterBootstrap");
        expect(oldTypes).toContain("pulumi-nodejs:dynamic:Resource");
        const pvcs = async () =>
          (await ctx.core.listNamespacedPersistentVolumeClaim({ namespace })).items.map((p) => p.metadata?.uid).sort();
        const pvcsBefore = await pvcs();
        expect(pvcsBefore).toHaveLength(6);

        // This checkout's program.
        delete workspace.envVars.VALKEY_ON_EKS_ROOT;
        program = () => main();
        const preview = await s.stack.preview({ onOutput: (o) => s.log.push(o) });
        const summary = preview.changeSummary as Record<string, number | undefined>;
        for (const op of ["replace", "delete", "create-replacement", "delete-replaced"])
          expect(summary[op] ?? 0, `${op}\n${tail(s.log, 80)}`).toBe(0);
        const up = await s.stack.up({ onOutput: (o) => s.log.push(o) });
        expect(up.summary.result, tail(s.log)).toBe("succeeded");
        const changes = (up.summary.resourceChanges ?? {}) as Record<string, number | undefined>;
        for (const op of ["replace", "delete", "create-replacement", "delete-replaced"])
          expect(changes[op] ?? 0, `${op}\n${tail(s.log, 80)}`).toBe(0);
        const newTypes = (
          (await s.stack.exportStack()) as { deployment: { resources: { type: string }[] } }
        ).deployment.resources.map((r) => r.type);
        expect(newTypes).toContain("valkey-on-eks:steps:VolumeRelease");
        expect(newTypes.filter((t) => t.startsWith("valkey-on-eks:checks:"))).toEqual([]);
        // The volumes are the same ones: VolumeRelease's delete never ran.
        expect(await pvcs()).toEqual(pvcsBefore);

        const again = await s.stack.up({ onOutput: (o) => s.log.push(o) });
        const rest = Object.entries(again.summary.resourceChanges ?? {}).filter(([k, n]) => k !== "same" && n > 0);
        expect(rest, tail(s.log)).toEqual([]);
      } finally {
        delete workspace.envVars.VALKEY_ON_EKS_ROOT;
        await valkeys.stop();
        await s.dispose();
      }
    },
    600_000,
  );
});
