/**
 * The slice of the Kubernetes API VolumeRelease needs (list/delete PVCs, list PVs), behind a
 * small interface so the release logic runs against fakes or the API server (client-node's
 * CoreV1Api) alike.
 */
import {
  CoreV1Api,
  type KubeConfig,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from "@kubernetes/client-node";

/** What the release reads from a PersistentVolumeClaim. */
export interface ClaimRecord {
  name: string;
  /** spec.volumeName: the PV it is bound to; undefined while unbound. */
  volumeName: string | undefined;
  /** Set once deleted; the claim stays while a finalizer holds it (pvc-protection: a pod uses it). */
  deleting: boolean;
  finalizers: string[];
}

/** What the release reads from a PersistentVolume. */
export interface VolumeRecord {
  name: string;
  /** spec.claimRef: the claim it is (or was) bound to. */
  claim: { namespace: string; name: string } | undefined;
  /** spec.persistentVolumeReclaimPolicy: Delete, Retain (kept by design) or Recycle. */
  reclaimPolicy: string;
  /** status.phase: Pending, Available, Bound, Released, Failed. */
  phase: string;
  /** The CSI driver and its handle (for EBS, the volume id `vol-...`); undefined for other sources. */
  csi: { driver: string; handle: string } | undefined;
  deleting: boolean;
}

export interface VolumeApi {
  /** PVCs in `namespace`, all of them or those matching the label `selector`. */
  listClaims(namespace: string, selector?: string): Promise<ClaimRecord[]>;
  /** Deletes a PVC; one that is already gone is not an error. */
  deleteClaim(namespace: string, name: string): Promise<void>;
  /** Every PersistentVolume of the cluster. */
  listVolumes(): Promise<VolumeRecord[]>;
}

export function claimRecordFromV1(c: V1PersistentVolumeClaim): ClaimRecord {
  return {
    name: c.metadata?.name ?? "",
    volumeName: c.spec?.volumeName || undefined,
    deleting: c.metadata?.deletionTimestamp !== undefined,
    finalizers: [...(c.metadata?.finalizers ?? [])],
  };
}

export function volumeRecordFromV1(v: V1PersistentVolume): VolumeRecord {
  const ref = v.spec?.claimRef;
  const csi = v.spec?.csi;
  return {
    name: v.metadata?.name ?? "",
    claim: ref?.name && ref.namespace ? { namespace: ref.namespace, name: ref.name } : undefined,
    reclaimPolicy: v.spec?.persistentVolumeReclaimPolicy ?? "Retain",
    phase: v.status?.phase ?? "Pending",
    csi: csi ? { driver: csi.driver, handle: csi.volumeHandle } : undefined,
    deleting: v.metadata?.deletionTimestamp !== undefined,
  };
}

const notFound = (err: unknown): boolean =>
  typeof err === "object" && err !== null && (err as { code?: unknown }).code === 404;

/** A VolumeApi over the API server the kubeconfig points at. */
export class KubeVolumeApi implements VolumeApi {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async listClaims(namespace: string, selector?: string): Promise<ClaimRecord[]> {
    const list = await this.core.listNamespacedPersistentVolumeClaim({
      namespace,
      ...(selector === undefined ? {} : { labelSelector: selector }),
    });
    return list.items.map(claimRecordFromV1);
  }

  async deleteClaim(namespace: string, name: string): Promise<void> {
    try {
      await this.core.deleteNamespacedPersistentVolumeClaim({ namespace, name });
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }

  async listVolumes(): Promise<VolumeRecord[]> {
    return (await this.core.listPersistentVolume()).items.map(volumeRecordFromV1);
  }
}
