/**
 * The ClusterShape guard's implementation (loaded by its dynamic-provider shell): it refuses,
 * in the engine's Check, a shape the running cluster cannot be moved to. Check runs in
 * `pulumi preview`, and in `up` before this resource changes; the StatefulSet depends on this
 * resource, so a refused shape stops the deployment before a pod is deleted.
 *
 * What is refused: fewer primaries unless a ClusterScaleIn step runs before the StatefulSet
 * (`scaleIn: true`: it migrates the slots off the leaving pods first; without it the StatefulSet
 * would delete the last pods with the slots they serve: CLUSTERDOWN and data lost), and another
 * replica count (pods are numbered P x (1 + M): the
 * ordinals would change roles, and the bootstrap re-forms no running cluster to another M).
 * Adding primaries (same M) is what the bootstrap applies to a formed cluster, and passes.
 */
import type { CheckFailure } from "../kit/protocol.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { shapeStep, type ClusterShapeInputs } from "./declaration.js";

type Props = Record<string, unknown>;

/** The stack config keys, named in the refusals. */
export const SHAPE_KEYS = {
  primaries: "valkey.cluster.primaries",
  replicasPerPrimary: "valkey.cluster.replicasPerPrimary",
} as const;

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) ? v : undefined);

/**
 * Refusals of the shape `news` given the applied shape `olds` (`{}`: nothing applied yet, so
 * anything goes). Each names the config key, both values, and what to do instead.
 */
export function refuseShapeChange(olds: Props, news: Props): CheckFailure[] {
  const failures: CheckFailure[] = [];
  const [p0, p1] = [count(olds.primaries), count(news.primaries)];
  const [m0, m1] = [count(olds.replicasPerPrimary), count(news.replicasPerPrimary)];
  if (p0 !== undefined && p1 !== undefined && p1 < p0 && news.scaleIn !== true) {
    failures.push({
      property: "primaries",
      reason:
        `${SHAPE_KEYS.primaries}: lowering it from ${p0} to ${p1} is refused: the StatefulSet would delete the last ` +
        `${p0 - p1} shard(s), primary and replicas together, with their slots and keys (CLUSTERDOWN, data lost). ` +
        `Nothing migrates the slots first while checks.bootstrap is false (the ClusterScaleIn step runs with the bootstrap): ` +
        `turn it on, keep ${SHAPE_KEYS.primaries} at ${p0} (or raise it), or deploy a new release with ${p1} primaries and move the data to it.`,
    });
  }
  if (m0 !== undefined && m1 !== undefined && m1 !== m0) {
    failures.push({
      property: "replicasPerPrimary",
      reason:
        `${SHAPE_KEYS.replicasPerPrimary}: changing it from ${m0} to ${m1} on a running cluster is refused: the pods are ` +
        `numbered primaries x (1 + replicasPerPrimary), so existing pods would change roles and ` +
        `${m1 < m0 ? "pods holding replicas would be deleted" : "the bootstrap cannot re-form the cluster with another replica count"}. ` +
        `Keep ${SHAPE_KEYS.replicasPerPrimary} at ${m0}, or deploy a new release with ${m1} and move the data to it.`,
    });
  }
  return failures;
}

/** What the guard records: the shape it let through and its pod count. */
export function shapeOf(i: ClusterShapeInputs): { pods: number } {
  return { pods: i.primaries * (1 + i.replicasPerPrimary) };
}

export const { check, create, diff, update } = dynamicProtocol(shapeStep, {
  run: (i) => Promise.resolve(shapeOf(i)),
  idOf: (i) => `${i.primaries}x${i.replicasPerPrimary}`,
  check: refuseShapeChange,
  // Defence in depth: an engine that skipped Check still cannot apply a refused shape.
  checkUpdate: (olds, news) => {
    const refused = refuseShapeChange(olds, news);
    if (refused.length > 0) throw new Error(refused.map((f) => f.reason).join("\n"));
  },
});
