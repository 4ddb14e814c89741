/**
 * The shared/ reference data the tests read: not part of the repository; it sits beside the
 * checkout (../shared), or wherever $VALKEY_ON_EKS_SHARED points. CI (.github/workflows/ci.yml)
 * fills such a folder with the CRDs by .ci/karpenter-crds.sh.
 */
import { join, resolve } from "node:path";
import { versions } from "../../versions.js";

export const SHARED_DIR = process.env.VALKEY_ON_EKS_SHARED ?? resolve(import.meta.dirname, "../../../shared");

/** Karpenter's CRDs at the chart version the program installs (versions.env KARPENTER_CHART_VERSION). */
export const KARPENTER_CRD_DIR = join(SHARED_DIR, "crds", `karpenter-${versions.KARPENTER_CHART_VERSION}`);
