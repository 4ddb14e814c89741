/**
 * VolumeRelease's implementation (loaded by its dynamic-provider shell, ./component.ts).
 *
 * On create/update it does nothing but record the namespace, selector and cluster access. On
 * DELETE (`pulumi destroy`, which deletes it after the Valkey release and before the platform:
 * the EBS CSI add-on, the node groups and Karpenter's nodes) it deletes the release's PVCs and
 * waits, bounded, until every PersistentVolume bound to them is gone, i.e. until the CSI driver
 * has deleted the disks. Without the wait the driver can be removed while the PVs are still
 * being deleted, and the EBS volumes stay behind (billed) with nothing left to delete them.
 */
import { loadKubeConfig } from "../../kubernetes/pod-api.js";
import { diffKeys, dynamicProtocol, jsonSafe, type DiffResult } from "../kit/protocol.js";
import { KubeVolumeApi, type ClaimRecord, type VolumeApi, type VolumeRecord } from "./volume-api.js";
import { volumeReleaseStep, type VolumeReleaseInputs } from "./declaration.js";

type Props = Record<string, unknown>;

/** A test's fakes and clock; a program passes none (the API server of the stored kubeconfig, real time). */
export interface ReleaseDeps {
  api?: VolumeApi;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** What a finished release did: the claims it deleted and the volumes it saw go. */
export interface ReleaseOutcome {
  deletedClaims: string[];
  releasedVolumes: string[];
  /** Volumes of those claims with reclaim policy Retain: kept by design, not waited for. */
  keptVolumes: string[];
}

/**
 * The PVs the release waits for: bound (or once bound) to a claim in `namespace` that the release
 * deleted (`deleted`), or, left over from an earlier destroy that gave up, Released/Failed/being
 * deleted with their claim gone (`live`: the claims still in the namespace). Volumes whose
 * reclaim policy is Retain are kept by design and never waited for.
 */
export function pendingVolumes(
  namespace: string,
  deleted: ReadonlySet<string>,
  live: ReadonlySet<string>,
  volumes: readonly VolumeRecord[],
): VolumeRecord[] {
  return volumes.filter((v) => {
    if (v.claim?.namespace !== namespace || v.reclaimPolicy === "Retain") return false;
    if (deleted.has(v.claim.name)) return true;
    const leftOver = v.phase === "Released" || v.phase === "Failed" || v.deleting;
    return leftOver && !live.has(v.claim.name);
  });
}

/** One line per volume still present: its claim, phase, reclaim policy and disk. */
export function describeVolume(v: VolumeRecord, claims: readonly ClaimRecord[]): string {
  const claim = claims.find((c) => c.name === v.claim?.name);
  const claimText = v.claim === undefined ? "no claim" : `claim ${v.claim.namespace}/${v.claim.name}`;
  const holding = claim
    ? `; the claim is still present${claim.finalizers.length > 0 ? ` (finalizers: ${claim.finalizers.join(", ")}: a pod may still use it)` : ""}`
    : "";
  const disk = v.csi ? `, disk ${v.csi.handle} of ${v.csi.driver}` : "";
  return `${v.name} (${claimText}, phase ${v.phase}, reclaim ${v.reclaimPolicy}${disk}${v.deleting ? ", being deleted" : ""}${holding})`;
}

/** The error when volumes outlive the wait: which, why it matters, and what to do. */
export function volumesStillPresentMessage(
  i: Pick<VolumeReleaseInputs, "namespace" | "selector" | "timeoutMs">,
  stuck: readonly VolumeRecord[],
  claims: readonly ClaimRecord[],
): string {
  const disks = stuck.flatMap((v) => (v.csi ? [v.csi.handle] : []));
  return [
    `VolumeRelease: ${stuck.length} PersistentVolume(s) of the PVCs in namespace ${i.namespace} (selector '${i.selector}') are still present ` +
      `after ${Math.round(i.timeoutMs / 1000)}s; their disks may still exist (and be billed):`,
    ...stuck.map((v) => `  ${describeVolume(v, claims)}`),
    "`pulumi destroy` stops here so that the CSI driver that deletes these disks (the EBS CSI add-on and the nodes its controller runs on) " +
      "is not removed before them. What to do: `kubectl describe pv " +
      stuck.map((v) => v.name).join(" ") +
      "` shows the driver's events (e.g. VolumeInUse: still attached to a node; AccessDenied: the driver's IAM role); " +
      "once fixed, run `pulumi destroy` again (it waits again). To give up on these disks instead: delete them yourself" +
      (disks.length > 0 ? ` (\`aws ec2 delete-volume --volume-id <id>\` for ${disks.join(", ")})` : "") +
      ", remove the PVs (`kubectl delete pv <name>`), then run `pulumi destroy` again.",
  ].join("\n");
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Deletes the PVCs in `i.namespace` matching `i.selector` and waits until every PV bound to them
 * (see pendingVolumes) is gone. Rejects after `i.timeoutMs` with volumesStillPresentMessage.
 */
export async function releaseVolumes(
  i: Pick<VolumeReleaseInputs, "namespace" | "selector" | "timeoutMs" | "pollMs">,
  api: VolumeApi,
  deps: ReleaseDeps = {},
): Promise<ReleaseOutcome> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? realSleep;
  const deadline = now() + i.timeoutMs;
  const claims = await api.listClaims(i.namespace, i.selector);
  const deleted = new Set(claims.map((c) => c.name));
  for (const c of claims) await api.deleteClaim(i.namespace, c.name);
  const seen = new Set<string>();
  const kept = new Set<string>();
  for (;;) {
    const [live, volumes] = await Promise.all([api.listClaims(i.namespace), api.listVolumes()]);
    const liveNames = new Set(live.map((c) => c.name));
    for (const v of volumes)
      if (v.claim?.namespace === i.namespace && deleted.has(v.claim.name) && v.reclaimPolicy === "Retain")
        kept.add(v.name);
    const pending = pendingVolumes(i.namespace, deleted, liveNames, volumes);
    for (const v of pending) seen.add(v.name);
    if (pending.length === 0) {
      return { deletedClaims: [...deleted].sort(), releasedVolumes: [...seen].sort(), keptVolumes: [...kept].sort() };
    }
    if (now() >= deadline) throw new Error(volumesStillPresentMessage(i, pending, live));
    await sleep(Math.max(1, Math.min(i.pollMs, deadline - now())));
  }
}

/** The kubeconfig is stored (secret: the component lists it in additionalSecretOutputs): the delete needs it. */
const ACCESS_KEYS = ["kubeconfig"] as const;
const withAccess = (outs: Props, inputs: Props): Props =>
  jsonSafe({ ...outs, ...Object.fromEntries(ACCESS_KEYS.map((k) => [k, inputs[k]])) });

const protocol = dynamicProtocol(volumeReleaseStep, {
  run: () => Promise.resolve({}),
  idOf: (i) => `${i.namespace}/${i.selector}`,
});

export const check = protocol.check;

export async function create(inputs: Props): Promise<{ id: string; outs: Props }> {
  const { id, outs } = await protocol.create(inputs);
  return { id, outs: withAccess(outs, inputs) };
}

/** A new kubeconfig is recorded too (an update), so the delete uses the latest one. */
export function diff(_id: string, olds: Props, news: Props): DiffResult {
  return diffKeys(olds, news, [...volumeReleaseStep.rerunKeys, ...ACCESS_KEYS]);
}

export async function update(id: string, olds: Props, news: Props): Promise<{ outs: Props }> {
  const { outs } = await protocol.update(id, olds, news);
  return { outs: withAccess(outs, news) };
}

/**
 * The DELETE: `props` are the stored outputs (the recorded inputs, kubeconfig included). Errors
 * reaching the cluster say so, and how to leave the resource behind when the cluster is gone.
 */
export async function destroy(_id: string, props: Props, deps: ReleaseDeps = {}): Promise<ReleaseOutcome> {
  const i = volumeReleaseStep.parse(props);
  const api = deps.api ?? new KubeVolumeApi(loadKubeConfig(i.kubeconfig, i.context));
  try {
    return await releaseVolumes(i, api, deps);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith("VolumeRelease:")) throw err;
    throw new Error(
      `VolumeRelease: could not release the PVCs in namespace ${i.namespace} (selector '${i.selector}') through the API server: ${(err as Error).message}. ` +
        "If the cluster no longer exists, nothing is left to release: remove this resource from the state (`pulumi state delete <its URN>`, see `pulumi stack --show-urns`) and run `pulumi destroy` again.",
      { cause: err },
    );
  }
}
