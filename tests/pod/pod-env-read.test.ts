/**
 * The environment a pod definition names (pod/definition.ts `env`, a step's `env`) is the
 * environment its scripts read: every `$NAME` / `${NAME…}` in the definition's files is in the
 * list, or in NOT_SET_IN_PODS with why the deployed pod leaves it unset; every name in the list is
 * read by a file, or by valkey-cli itself (READ_BY_VALKEY_CLI); the backup and restore scripts read
 * exactly the variables declared beside them (BACKUP_ENV, RESTORE_ENV). A script that starts reading
 * a new variable, or a list that keeps one no script reads any more, fails here naming it.
 */
import { describe, expect, it } from "vitest";
import { BACKUP_ENV, backupPod } from "../../pod/backup-pod.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { replicationMemberPod } from "../../pod/replication-member.js";
import { RESTORE_ENV, restorePod } from "../../pod/restore-pod.js";
import { sentinelPod } from "../../pod/sentinel.js";
import { valkeyConfig } from "../support/valkey-fixtures.js";

/** Upper-case variables the files read (lower-case ones are the scripts' own). */
function readBy(files: Record<string, string>): string[] {
  const names = new Set<string>();
  for (const m of Object.values(files)
    .join("\n")
    .matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g))
    names.add(m[1] as string);
  return [...names].sort();
}

/** Read by valkey-cli, not by the scripts: the password, never in argv. */
const READ_BY_VALKEY_CLI = ["VALKEYCLI_AUTH", "REDISCLI_AUTH"];

/** Variables a script reads that the deployed pod leaves unset, by pod kind, each with why. */
const NOT_SET_IN_PODS: Record<string, Record<string, string>> = {
  all: { VALKEY_CLI: "lib-cli.sh's valkey-cli path: the image has it on PATH; a local launch sets it to the binary" },
  cluster: {
    VALKEY_HEAL_HOSTS_FILE:
      "heal and rejoin resolve peers through it in the local drills (no cluster DNS); a pod uses the resolver",
  },
  replication: {
    VALKEY_ANNOUNCE_IP:
      "start.sh's cluster announce line, and the e2e stand-in's second identity of a recreated member: a replication pod announces its DNS name",
    VALKEY_AVAILABILITY_ZONE: "start.sh's cluster-only availability-zone line",
  },
  sentinel: {},
};

const clusterConfig = valkeyConfig({
  mode: "cluster",
  cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 5000 },
});

const pods = (auth: boolean) =>
  [
    ["cluster", clusterMemberPod({ valkey: clusterConfig, auth })],
    [
      "replication",
      replicationMemberPod({ valkey: valkeyConfig(), auth, masterName: "valkey-primary", sentinels: ["s-0:26379"] }),
    ],
    [
      "sentinel",
      sentinelPod({
        auth,
        masterName: "valkey-primary",
        primary: { host: "valkey-0", port: 6379 },
        quorum: 2,
        downAfterMs: 5000,
        failoverTimeoutMs: 60_000,
        parallelSyncs: 1,
      }),
    ],
  ] as const;

describe("a pod definition's env is what its scripts read", () => {
  it.each([true, false])("the server pods (auth %s)", (auth) => {
    for (const [kind, def] of pods(auth)) {
      const unset = { ...NOT_SET_IN_PODS.all, ...NOT_SET_IN_PODS[kind] };
      const read = readBy(def.files);
      expect(
        read.filter((n) => !def.env.includes(n) && !(n in unset)),
        `${kind}: read, not in its env`,
      ).toEqual([]);
      expect(
        def.env.filter((n) => !read.includes(n) && !READ_BY_VALKEY_CLI.includes(n)),
        `${kind}: in its env, read by nothing`,
      ).toEqual([]);
      expect(
        Object.keys(unset).filter((n) => !read.includes(n)),
        `${kind}: an unset entry nothing reads`,
      ).toEqual([]);
    }
  });

  it("the backup and restore scripts read exactly their declared variables (BACKUP_ENV, RESTORE_ENV with the S3 and tool ones), each step's required ones among them", () => {
    const backup = backupPod({ mode: "cluster", from: { seed: { host: "h", port: 6379 } }, configDir: "/d" });
    const declared: string[] = Object.values(BACKUP_ENV).sort();
    expect(readBy(backup.files)).toEqual(declared);
    for (const step of [backup.snapshot, backup.upload, backup.all])
      expect(step.env.filter((n) => !declared.includes(n))).toEqual([]);
    const restore = restorePod({ mode: "replication", configDir: "/d" });
    const shared = [BACKUP_ENV.endpoint, BACKUP_ENV.awsCli, BACKUP_ENV.cli, BACKUP_ENV.checkRdb];
    const restoreDeclared: string[] = [...Object.values(RESTORE_ENV), ...shared].sort();
    expect(readBy(restore.files)).toEqual(restoreDeclared);
    for (const step of [restore.fetch, restore.place])
      expect(step.env.filter((n) => !restoreDeclared.includes(n))).toEqual([]);
  });
});
