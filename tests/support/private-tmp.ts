/**
 * Global setup of the `unit` and `e2e` projects: one private temporary directory per run, as
 * TMPDIR for the test files (os.tmpdir()) and every process they start (valkey-server data dirs,
 * the Pulumi engine and its providers, tsx's cache), removed when the run ends. Without it each
 * run left ~600 directories and files in the machine's /tmp (verify-zones-*, vbench-config-*, the
 * Kubernetes provider's kubeconfig* copies): 3 GB after a day of CI runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), "vbench-run-"));
  process.env.TMPDIR = dir;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    rmSync(dir, { recursive: true, force: true });
  };
}
