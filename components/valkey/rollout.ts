/**
 * How a release's members and Sentinels take a new pod template: their StatefulSets use
 * `updateStrategy: OnDelete`, so a changed template (image, a restart-only setting, resources)
 * restarts nothing by itself; the RollingRestart step (components/steps/rolling-restart/) then
 * deletes the pods one at a time in the order the live roles demand (core/roll/roll-plan.ts).
 * A plain RollingUpdate restarts by ordinal, highest first, whatever each pod's role: it can
 * restart a primary before its replicas, and a replica that is the only synced one of its shard
 * (valkey-operator moved to the same design, issue #198; the Bitnami and official charts leave
 * RollingUpdate and let the preStop hand over). HAProxy stays a Deployment with its own rolling
 * update (maxUnavailable 0, maxSurge 1): it holds no data. The members' template carries the hash
 * of their files with valkey.conf reduced to its RESTART directives (pod/conf-directives.ts
 * `restartFiles`): a change of LIVE directives alone changes no template and rolls nothing; the
 * LiveConfig step (components/steps/live-config/) sets those on the running members instead. Pure.
 */
import { createHash } from "node:crypto";
import { liveDirectives } from "../../pod/conf-directives.js";
import { VALKEY_CONF_KEY } from "../../pod/member.js";
import type { StatefulSet } from "./k8s-types.js";

/** The StatefulSets' update strategy: pods change only when the RollingRestart step deletes them. */
export const ROLLED_BY_STEP = { type: "OnDelete" } as const;

/**
 * How a change reaches the running pods: the RollingRestart step gets which StatefulSets it rolls
 * and one hash of their pod templates (a new hash is a roll; the members' config-hash annotation
 * leaves out the LIVE directives, pod/conf-directives.ts); the LiveConfig step gets the members'
 * LIVE directives with their values (`CONFIG SET` on every member, no restart).
 */
export interface Rollout {
  statefulSets: string[];
  templateHash: string;
  /** The members' LIVE valkey.conf directives → value as CONFIG SET takes it (the LiveConfig step's input). */
  live: Record<string, string>;
}

/**
 * The rollout of `sets`, whose members run `memberFiles` (their ConfigMap files: the LIVE directives come from its
 * valkey.conf).
 */
export function rolloutOf(sets: readonly StatefulSet[], memberFiles: Readonly<Record<string, string>>): Rollout {
  const conf = memberFiles[VALKEY_CONF_KEY];
  if (conf === undefined) throw new Error(`the members' files hold no ${VALKEY_CONF_KEY}`);
  const h = createHash("sha256");
  for (const s of sets) h.update(JSON.stringify({ name: s.metadata?.name, template: s.spec?.template }));
  return {
    statefulSets: sets.map((s) => String(s.metadata?.name)),
    templateHash: h.digest("hex").slice(0, 16),
    live: liveDirectives(conf),
  };
}
