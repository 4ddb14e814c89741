/**
 * VolumeRelease (components/steps/volume-release/): which volumes its delete waits for, the wait
 * itself over a fake API and clock (the real API server: tests/e2e/volume-release.test.ts), what
 * create/diff/update record, and its provider serialized and run in a plain node process.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { volumeReleaseProvider } from "../../components/steps/volume-release/component.js";
import {
  create,
  diff,
  pendingVolumes,
  releaseVolumes,
  update,
} from "../../components/steps/volume-release/implementation.js";
import type { ClaimRecord, VolumeApi, VolumeRecord } from "../../components/steps/volume-release/volume-api.js";
import { runSerializedProvider, unreachableKubeconfig } from "../support/serialized-provider.js";

const NS = "valkey";
const SELECTOR = "app.kubernetes.io/instance=valkey";

const pv = (name: string, claim: string | undefined, o: Partial<VolumeRecord> = {}): VolumeRecord => ({
  name,
  claim: claim === undefined ? undefined : { namespace: NS, name: claim },
  reclaimPolicy: "Delete",
  phase: "Bound",
  csi: { driver: "ebs.csi.aws.com", handle: `vol-${name}` },
  deleting: false,
  ...o,
});
const pvc = (name: string, volumeName?: string): ClaimRecord => ({
  name,
  volumeName,
  deleting: false,
  finalizers: ["kubernetes.io/pvc-protection"],
});

describe("pendingVolumes", () => {
  it("waits for the volumes of the deleted claims and for left-over Released ones of the namespace, never for Retain or other namespaces", () => {
    const volumes = [
      pv("a", "data-valkey-0"),
      pv("b", "data-valkey-1", { phase: "Released" }),
      pv("kept", "data-valkey-2", { reclaimPolicy: "Retain", phase: "Released" }),
      pv("other-ns", "data-valkey-0", { claim: { namespace: "elsewhere", name: "data-valkey-0" } }),
      pv("left-over", "data-valkey-9", { phase: "Released" }),
      pv("live-other", "someone-elses"),
      pv("unclaimed", undefined, { phase: "Available" }),
    ];
    const pending = pendingVolumes(
      NS,
      new Set(["data-valkey-0", "data-valkey-1", "data-valkey-2"]),
      new Set(["someone-elses"]),
      volumes,
    );
    expect(pending.map((v) => v.name)).toEqual(["a", "b", "left-over"]);
  });
});

/** A fake cluster: the claims of NS and volumes; each volume of a deleted claim disappears after `pollsToGo` looks. */
function fakeCluster(
  claims: ClaimRecord[],
  volumes: VolumeRecord[],
  pollsToGo: number | "never",
): VolumeApi & { deleted: string[] } {
  const deleted: string[] = [];
  let looks = 0;
  return {
    deleted,
    listClaims: (namespace, selector) => {
      expect(namespace).toBe(NS);
      const live = claims.filter((c) => !deleted.includes(c.name));
      return Promise.resolve(selector === undefined ? live : live.filter((c) => c.name.startsWith("data-")));
    },
    deleteClaim: (namespace, name) => {
      deleted.push(name);
      return Promise.resolve();
    },
    listVolumes: () => {
      looks += 1;
      const gone = pollsToGo !== "never" && looks > pollsToGo;
      return Promise.resolve(
        volumes
          .filter((v) => !(gone && deleted.includes(v.claim?.name ?? "")))
          .map((v) => ({ ...v, phase: "Released" })),
      );
    },
  };
}

function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
    slept,
  };
}

describe("releaseVolumes", () => {
  const input = { namespace: NS, selector: SELECTOR, timeoutMs: 10_000, pollMs: 1_000 };

  it("deletes the selected claims and returns once their volumes are gone, polling in between", async () => {
    const api = fakeCluster(
      [pvc("data-valkey-0", "a"), pvc("data-valkey-1", "b"), pvc("other")],
      [pv("a", "data-valkey-0"), pv("b", "data-valkey-1")],
      3,
    );
    const clock = fakeClock();
    const outcome = await releaseVolumes(input, api, clock);
    expect(api.deleted).toEqual(["data-valkey-0", "data-valkey-1"]);
    expect(clock.slept).toEqual([1_000, 1_000, 1_000]);
    expect(outcome).toEqual({
      deletedClaims: ["data-valkey-0", "data-valkey-1"],
      releasedVolumes: ["a", "b"],
      keptVolumes: [],
    });
  });

  it("rejects at its bound naming each volume, its claim, phase and disk, and what to do", async () => {
    const api = fakeCluster([pvc("data-valkey-0", "a")], [pv("a", "data-valkey-0")], "never");
    const clock = fakeClock();
    const err = await releaseVolumes(input, api, clock).catch((e: unknown) => e as Error);
    expect(clock.now()).toBe(10_000);
    expect((err as Error).message).toBe(
      [
        `VolumeRelease: 1 PersistentVolume(s) of the PVCs in namespace valkey (selector '${SELECTOR}') are still present after 10s; their disks may still exist (and be billed):`,
        "  a (claim valkey/data-valkey-0, phase Released, reclaim Delete, disk vol-a of ebs.csi.aws.com)",
        "`pulumi destroy` stops here so that the CSI driver that deletes these disks (the EBS CSI add-on and the nodes its controller runs on) is not removed before them. " +
          "What to do: `kubectl describe pv a` shows the driver's events (e.g. VolumeInUse: still attached to a node; AccessDenied: the driver's IAM role); once fixed, " +
          "run `pulumi destroy` again (it waits again). To give up on these disks instead: delete them yourself (`aws ec2 delete-volume --volume-id <id>` for vol-a), " +
          "remove the PVs (`kubectl delete pv <name>`), then run `pulumi destroy` again.",
      ].join("\n"),
    );
  });

  it("returns at once when the release has no claims and no volume is left over", async () => {
    const clock = fakeClock();
    expect(await releaseVolumes(input, fakeCluster([], [], "never"), clock)).toEqual({
      deletedClaims: [],
      releasedVolumes: [],
      keptVolumes: [],
    });
    expect(clock.slept).toEqual([]);
  });
});

describe("create, diff and update", () => {
  const inputs = { namespace: NS, selector: SELECTOR, kubeconfig: "KUBECONFIG-TEXT", timeoutMs: 5_000, pollMs: 100 };

  it("create records the namespace, selector and the kubeconfig (for the delete), touching no cluster", async () => {
    const { id, outs } = await create(inputs);
    expect(id).toBe(`${NS}/${SELECTOR}`);
    expect(outs).toMatchObject({ namespace: NS, selector: SELECTOR, kubeconfig: "KUBECONFIG-TEXT", timeoutMs: 5_000 });
    expect(outs.runStamp).toEqual(expect.any(String));
  });

  it("a new namespace, selector or kubeconfig is recorded by an update; a new bound is not a change", async () => {
    const { outs } = await create(inputs);
    expect(diff("id", outs, inputs).changes).toBe(false);
    expect(diff("id", outs, { ...inputs, timeoutMs: 9_000 }).changes).toBe(false);
    for (const change of [{ namespace: "x" }, { selector: "a=b" }, { kubeconfig: "OTHER" }]) {
      expect(diff("id", outs, { ...inputs, ...change }), JSON.stringify(change)).toMatchObject({
        changes: true,
        replaces: [],
      });
    }
    const updated = await update("id", outs, { ...inputs, kubeconfig: "OTHER" });
    expect(updated.outs.kubeconfig).toBe("OTHER");
  });
});

describe("the serialized VolumeRelease provider in a plain node process", () => {
  it("its delete loads the implementation and calls the Kubernetes API (an unreachable one here: the clear error)", async () => {
    const provider = volumeReleaseProvider();
    const { text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: false });
    expect(text).toContain("volume-release/implementation.ts");
    const kubeconfig = unreachableKubeconfig("KUBE-TOKEN-distinctive-4410");
    expect(text).not.toContain("KUBE-TOKEN");
    const props = { namespace: NS, selector: SELECTOR, kubeconfig, timeoutMs: 5_000, pollMs: 100 };
    const stdout = await runSerializedProvider(text, [
      `p.delete("id", ${JSON.stringify(props)})` +
        `.then(() => console.log("DELETED"), (e) => console.log("ERROR " + e.message));`,
    ]);
    expect(stdout).toMatch(
      /^ERROR VolumeRelease: could not release the PVCs in namespace valkey \(selector '[^']+'\) through the API server: .*pulumi state delete/s,
    );
    expect(stdout).not.toContain("KUBE-TOKEN");
  }, 60_000);
});
