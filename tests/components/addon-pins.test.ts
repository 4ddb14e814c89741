/**
 * The AddonPins step (components/steps/addon-pins/): the versions it stores are EKS's defaults
 * with the config's own over them, and only `eks.version` or `eks.addonVersions` re-runs it: a new
 * default EKS publishes (a changed `resolved`, asked at every preview) changes nothing, so the
 * add-ons stay where they are. The program's wiring (every add-on reads the stored versions) is
 * tests/components/eks-cluster.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { diff, pinnedVersions } from "../../components/steps/addon-pins/implementation.js";

const RESOLVED = { vpcCni: "v1.20.1-eksbuild.1", kubeProxy: "v1.36.0-eksbuild.2", coredns: "v1.12.1-eksbuild.1" };
const stored = { kubernetesVersion: "1.36", overrides: {}, resolved: RESOLVED };

describe("AddonPins", () => {
  it("stores EKS's defaults, the config's versions over them", () => {
    expect(pinnedVersions(stored).versions).toEqual(RESOLVED);
    expect(pinnedVersions({ ...stored, overrides: { kubeProxy: "v1.36.1-eksbuild.1" } }).versions).toEqual({
      ...RESOLVED,
      kubeProxy: "v1.36.1-eksbuild.1",
    });
  });

  it("a new default from EKS re-runs nothing; eks.version or eks.addonVersions does", () => {
    const newer = { ...RESOLVED, vpcCni: "v1.21.0-eksbuild.1", kubeProxy: "v1.36.3-eksbuild.1" };
    expect(diff("addons-1.36", stored, { ...stored, resolved: newer })).toMatchObject({ changes: false });
    expect(diff("addons-1.36", stored, { ...stored, kubernetesVersion: "1.37", resolved: newer })).toMatchObject({
      changes: true,
    });
    expect(diff("addons-1.36", stored, { ...stored, overrides: { vpcCni: "v1.21.0-eksbuild.1" } })).toMatchObject({
      changes: true,
    });
  });
});
