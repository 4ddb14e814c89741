/**
 * The RestoreCheck resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests with a static pod API over real valkey-server processes). After a restore
 * (`restore.from`), it reads what each member's `restore-place` init container reported in its
 * termination message (the shard it placed, with that shard's manifest line: key and expiry
 * counts, and the backup id; or why it placed nothing), runs the verifier for each primary's slot
 * ranges and DBSIZE, maps each restored shard to the primary now serving its slots (cluster; a
 * failover during the restore bootstrap may have moved it) or to the one primary (replication),
 * and fails `pulumi up` naming each shard whose DBSIZE is above the manifest's count or below it
 * by more than its keys with a TTL. The stack never reads S3 for it: the members did.
 */
import { checkRestoredKeyCounts } from "../../../core/backup/restore-check.js";
import type { TopologyReport } from "../../../core/verify/verify-types.js";
import { podAnnouncedAs } from "../../kubernetes/pod-addresses.js";
import { kubeDeps, usablePods } from "../kit/kube-access.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { kubernetesVerifier, type CheckDeps } from "../topology-check/implementation.js";
import { restoreCheckStep, type RestoreCheckInputs, type RestoreCheckOutputs } from "./declaration.js";
import { restoredBackup } from "./placed.js";

export type { RestoreCheckInputs, RestoreCheckOutputs } from "./declaration.js";

export async function checkRestore(i: RestoreCheckInputs, deps: CheckDeps = kubeDeps(i)): Promise<RestoreCheckOutputs> {
  const restored = restoredBackup(await deps.podApi.listPods(i.namespace, i.selector), i.from);
  const pods = await usablePods(i, deps);
  const { verify, close } = await kubernetesVerifier({ ...i, countKeys: true }, deps);
  let report: TopologyReport;
  try {
    report = await verify();
  } finally {
    await close();
  }
  const nameOf = (address: string): string =>
    podAnnouncedAs(address, pods, { namespace: i.namespace, headlessService: i.headlessService })?.name ?? address;
  const primaries = report.shards.map((s) => ({
    name: nameOf(s.primary.address),
    slotRanges: s.primary.slotRanges,
    keys: s.primary.keys,
  }));
  const { shards, problems } = checkRestoredKeyCounts(i.mode, restored.entries, primaries);
  if (problems.length > 0)
    throw new Error(`restore check of backup ${restored.backup} (${i.from}) failed:\n  ${problems.join("\n  ")}`);
  return { report: { from: i.from, backup: restored.backup, shards } };
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

export const { check, create, diff, update } = dynamicProtocol(restoreCheckStep, {
  run: (i, deps?: CheckDeps) => checkRestore(i, deps),
  idOf: (i) => `${i.namespace}/${i.selector}/restore`,
});
