/**
 * VolumeRelease's DELETE (components/steps/volume-release/) against the real API server and
 * controller manager of the e2e plane: it deletes the release's PVCs, and returns only once
 * every PersistentVolume bound to them is gone, or fails after its bound naming the PVs.
 *
 * The volumes here are of a StorageClass kwok does not serve (`e2e-slow-csi`), annotated as
 * provisioned by `ebs.csi.aws.com`: once their claim is deleted the controller manager marks them
 * Released and leaves their deletion to that (external) driver, as on EKS. A test-side "CSI
 * driver" deletes them a few seconds after they are Released, as the EBS CSI controller deletes
 * the disk and then the PV; without it they stay, as when the add-on is already gone.
 */
import type { V1PersistentVolume } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { volumeReleaseProvider } from "../../components/steps/volume-release/component.js";
import { destroy } from "../../components/steps/volume-release/implementation.js";
import { pollInBackground } from "../support/background-poll.js";
import { eventually } from "../support/processes.js";
import { useE2eContext } from "./support/e2e-context.js";

const ctx = useE2eContext();

const CLASS = "e2e-slow-csi";
const DRIVER = "ebs.csi.aws.com";
const RELEASE = { "app.kubernetes.io/instance": "valkey", "app.kubernetes.io/part-of": "valkey-on-eks" };
const SELECTOR = "app.kubernetes.io/instance=valkey,app.kubernetes.io/part-of=valkey-on-eks";
/** How long the fake driver takes to delete a Released volume. */
const CSI_DELAY_MS = 4_000;

/** A PV pre-bound to `namespace/claim`, and that claim (release-labelled unless `labels` says otherwise), bound. */
async function boundVolume(
  namespace: string,
  claim: string,
  o: { reclaim?: "Delete" | "Retain"; labels?: Record<string, string> } = {},
): Promise<string> {
  const pv = `pv-${namespace}-${claim}`;
  await ctx.core.createPersistentVolume({
    body: {
      metadata: { name: pv, annotations: { "pv.kubernetes.io/provisioned-by": DRIVER } },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: o.reclaim ?? "Delete",
        storageClassName: CLASS,
        csi: { driver: DRIVER, volumeHandle: `vol-${claim}` },
        claimRef: { namespace, name: claim },
      },
    },
  });
  await ctx.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: claim, labels: o.labels ?? RELEASE },
      spec: {
        accessModes: ["ReadWriteOnce"],
        storageClassName: CLASS,
        volumeName: pv,
        resources: { requests: { storage: "1Gi" } },
      },
    },
  });
  await eventually(`${namespace}/${claim} bound`, 60_000, async () => {
    const c = await ctx.core.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
    return c.status?.phase === "Bound" ? true : undefined;
  });
  return pv;
}

async function namespaceWith(name: string): Promise<string> {
  await ctx.core.createNamespace({ body: { metadata: { name } } });
  return name;
}

async function volumeNames(): Promise<string[]> {
  return (await ctx.core.listPersistentVolume()).items.map((v: V1PersistentVolume) => v.metadata?.name ?? "");
}

/**
 * The fake CSI driver: deletes each Released volume of CLASS `CSI_DELAY_MS` after it saw it
 * Released; records when the API server accepted the delete (before the volume can be seen gone:
 * recording it only after its own poll saw the volume gone raced a faster VolumeRelease poll).
 */
function fakeCsiDriver(): { deletedAt: Map<string, number>; stop: () => Promise<void> } {
  const releasedAt = new Map<string, number>();
  const deletedAt = new Map<string, number>();
  const poll = pollInBackground(async () => {
    for (const v of (await ctx.core.listPersistentVolume()).items) {
      const name = v.metadata?.name ?? "";
      if (v.spec?.storageClassName !== CLASS || v.status?.phase !== "Released" || deletedAt.has(name)) continue;
      const seen = releasedAt.get(name) ?? Date.now();
      releasedAt.set(name, seen);
      if (Date.now() - seen >= CSI_DELAY_MS) {
        await ctx.core.deletePersistentVolume({ name });
        deletedAt.set(name, Date.now());
      }
    }
  }, 200);
  return { deletedAt, stop: () => poll.stop() };
}

describe("VolumeRelease delete against a real API server", () => {
  it("deletes the release's PVCs and returns only after the driver deleted their PVs; other claims are left alone", async () => {
    const namespace = await namespaceWith("vr-wait");
    const ours = [
      await boundVolume(namespace, "data-valkey-0"),
      await boundVolume(namespace, "data-valkey-sentinel-0"),
    ];
    const otherPv = await boundVolume(namespace, "someone-elses", { labels: { app: "other" } });
    const csi = fakeCsiDriver();
    try {
      const started = Date.now();
      // Through the provider's delete, as the engine calls it (stored outputs, kubeconfig included).
      await volumeReleaseProvider().delete?.(`${namespace}/${SELECTOR}`, {
        namespace,
        selector: SELECTOR,
        kubeconfig: ctx.plane.kubeconfig,
        timeoutMs: 60_000,
        pollMs: 250,
      });
      const returned = Date.now();
      expect(returned - started).toBeGreaterThanOrEqual(CSI_DELAY_MS);
      for (const pv of ours) {
        const at = csi.deletedAt.get(pv);
        expect(at, `${pv} deleted by the driver`).toBeDefined();
        expect(at as number).toBeLessThanOrEqual(returned);
      }
      const left = await volumeNames();
      for (const pv of ours) expect(left).not.toContain(pv);
      // Another claim in the namespace (not the release's selector) keeps its claim and volume.
      expect(left).toContain(otherPv);
      const claims = (await ctx.core.listNamespacedPersistentVolumeClaim({ namespace })).items.map(
        (c) => c.metadata?.name,
      );
      expect(claims).toEqual(["someone-elses"]);
    } finally {
      await csi.stop();
    }
  }, 120_000);

  it("fails after its bound naming each PV still present, its disk and what to do, when no driver deletes them", async () => {
    const namespace = await namespaceWith("vr-stuck");
    const pv = await boundVolume(namespace, "data-valkey-1");
    const props = { namespace, selector: SELECTOR, kubeconfig: ctx.plane.kubeconfig, timeoutMs: 3_000, pollMs: 250 };
    const started = Date.now();
    const err = await destroy("id", props).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(err?.message).toMatch(
      /^VolumeRelease: 1 PersistentVolume\(s\) of the PVCs in namespace vr-stuck .* still present after 3s/,
    );
    expect(err?.message).toContain(
      `${pv} (claim vr-stuck/data-valkey-1, phase Released, reclaim Delete, disk vol-data-valkey-1 of ${DRIVER}`,
    );
    expect(err?.message).toContain(`kubectl describe pv ${pv}`);
    expect(err?.message).toContain("aws ec2 delete-volume --volume-id <id>` for vol-data-valkey-1");
    expect(err?.message).toContain("run `pulumi destroy` again");
    // The claim was deleted; the volume is still there (Released), as the message says.
    expect((await ctx.core.listNamespacedPersistentVolumeClaim({ namespace })).items).toEqual([]);
    expect(await volumeNames()).toContain(pv);

    // A second destroy (the claim already gone) still waits for the left-over volume: it fails the same way...
    await expect(destroy("id", props)).rejects.toThrow(pv);
    // ...and succeeds once the volume is deleted.
    await ctx.core.deletePersistentVolume({ name: pv });
    await destroy("id", { ...props, timeoutMs: 30_000 });
    expect(await volumeNames()).not.toContain(pv);
  }, 120_000);

  it("does not wait for volumes whose reclaim policy is Retain (kept by design)", async () => {
    const namespace = await namespaceWith("vr-retain");
    const pv = await boundVolume(namespace, "data-valkey-2", { reclaim: "Retain" });
    const started = Date.now();
    await destroy("id", {
      namespace,
      selector: SELECTOR,
      kubeconfig: ctx.plane.kubeconfig,
      timeoutMs: 30_000,
      pollMs: 250,
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await volumeNames()).toContain(pv);
  }, 120_000);

  it("names the API server error and the way out when the cluster cannot be reached", async () => {
    const kubeconfig = ctx.plane.kubeconfig.replace(
      /server: https:\/\/127\.0\.0\.1:\d+/,
      "server: https://127.0.0.1:1",
    );
    expect(kubeconfig).not.toBe(ctx.plane.kubeconfig);
    await expect(
      destroy("id", { namespace: "vr-gone", selector: SELECTOR, kubeconfig, timeoutMs: 5_000, pollMs: 250 }),
    ).rejects.toThrow(/VolumeRelease: could not release the PVCs in namespace vr-gone .*pulumi state delete/s);
  }, 60_000);
});
