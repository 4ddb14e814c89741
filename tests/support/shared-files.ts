/**
 * Reference files the tests read from the shared/ folder beside the checkout (`../shared`
 * from the repository root), or from the folder VALKEY_ON_EKS_SHARED names. Never a machine path.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The shared/ folder: $VALKEY_ON_EKS_SHARED, else `shared` beside the checkout. */
export function sharedDir(): string {
  return process.env.VALKEY_ON_EKS_SHARED ?? join(import.meta.dirname, "../../../shared");
}

/** Karpenter 1.14.1's CRD YAML files; throws naming where it looked and how to point elsewhere. */
export function karpenterCrdDir(): string {
  const dir = join(sharedDir(), "crds/karpenter-1.14.1");
  if (!existsSync(dir)) throw new Error(`Karpenter CRDs not found at ${dir}: expected shared/ beside the checkout, or set VALKEY_ON_EKS_SHARED`);
  return dir;
}
