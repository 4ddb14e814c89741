/**
 * Reference files the tests read from the shared/ folder beside the checkout (`../shared`
 * from the repository root), or from the folder VALKEY_ON_EKS_SHARED names. Never a machine path.
 * CI on GitHub (.github/workflows/ci.yml) fills such a folder with the CRDs by .ci/karpenter-crds.sh.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { versions } from "../../versions.js";

/** The shared/ folder: $VALKEY_ON_EKS_SHARED, else `shared` beside the checkout. */
export function sharedDir(): string {
  return process.env.VALKEY_ON_EKS_SHARED ?? join(import.meta.dirname, "../../../shared");
}

/** Karpenter's CRD YAML files at the chart version the program installs; throws naming where it looked. */
export function karpenterCrdDir(): string {
  const dir = join(sharedDir(), "crds", `karpenter-${versions.KARPENTER_CHART_VERSION}`);
  if (!existsSync(dir)) throw new Error(`Karpenter CRDs not found at ${dir}: expected shared/ beside the checkout, or set VALKEY_ON_EKS_SHARED`);
  return dir;
}
