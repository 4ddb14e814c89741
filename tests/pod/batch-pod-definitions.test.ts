/**
 * The backup and restore pods' definitions (pod/backup-pod.ts, pod/restore-pod.ts): the commands
 * and environment the manifests (components/valkey/) and the local runs
 * (harness/backup/local-backup.ts) both take from them, and the refusal of a container or a
 * launch that leaves a variable a step's script needs unset.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { buildBackupManifests } from "../../components/valkey/backup-cronjob.js";
import { restorePodParts, restoreScriptFiles } from "../../components/valkey/restore-init.js";
import { BACKUP_ENV, backupPod } from "../../pod/backup-pod.js";
import { CONFIG_MOUNT } from "../../pod/paths.js";
import { RESTORE_ENV, restorePod } from "../../pod/restore-pod.js";
import { missingStepEnv, requireStepEnv } from "../../pod/script-step.js";

const backup = parseStackConfig({ backup: { enabled: true, bucket: "my-bucket" } }).config.backup;

describe("the backup pod's definition", () => {
  it("a seed: snapshot-from / upload / all-from with the mode, each step naming what it needs", () => {
    const pod = backupPod({ mode: "cluster", from: { seed: { host: "valkey", port: 6379 } }, configDir: "/etc/b" });
    expect(pod.snapshot.command).toEqual(["sh", "/etc/b/backup.sh", "snapshot-from", "cluster", "valkey", "6379"]);
    expect(pod.upload.command).toEqual(["sh", "/etc/b/backup.sh", "upload", "cluster"]);
    expect(pod.all.command).toEqual(["sh", "/etc/b/backup.sh", "all-from", "cluster", "valkey", "6379"]);
    expect(pod.snapshot.env).toEqual([BACKUP_ENV.workDir]);
    expect(pod.upload.env).toEqual([BACKUP_ENV.workDir, BACKUP_ENV.uri]);
    expect(Object.keys(pod.files)).toEqual(["backup.sh"]);
  });

  it("planned targets: snapshot takes them without the mode, all with it; none is refused", () => {
    const pod = backupPod({ mode: "replication", from: { targets: ["0/h/1/"] }, configDir: "/d" });
    expect(pod.snapshot.command).toEqual(["sh", "/d/backup.sh", "snapshot", "0/h/1/"]);
    expect(pod.all.command).toEqual(["sh", "/d/backup.sh", "all", "replication", "0/h/1/"]);
    expect(() => backupPod({ mode: "replication", from: { targets: [] }, configDir: "/d" })).toThrow(/no targets/);
  });

  it("the CronJob's containers run the definition's commands and set what each step needs", () => {
    const m = buildBackupManifests({
      namespace: "valkey",
      release: "valkey",
      mode: "cluster",
      backup: backup,
      bucket: "my-bucket",
      seedHost: "valkey.valkey.svc",
      region: "us-east-1",
      valkeyImage: "valkey",
      secretName: undefined,
      placement: { nodeSelector: {}, tolerations: [] },
    });
    const spec = m.cronJob.spec!.jobTemplate.spec!.template.spec!;
    const pod = backupPod({
      mode: "cluster",
      from: { seed: { host: "valkey.valkey.svc", port: 6379 } },
      configDir: "/etc/valkey-backup",
    });
    const [snapshot, upload] = [spec.initContainers![0]!, spec.containers[0]!];
    expect(snapshot.command).toEqual(pod.snapshot.command);
    expect(upload.command).toEqual(pod.upload.command);
    expect(
      missingStepEnv(
        pod.snapshot,
        snapshot.env!.map((e) => e.name),
      ),
    ).toEqual([]);
    expect(
      missingStepEnv(
        pod.upload,
        upload.env!.map((e) => e.name),
      ),
    ).toEqual([]);
    expect(m.configMap.data!["backup.sh"]).toBe(pod.files["backup.sh"]);
  });
});

describe("the restore steps' definition", () => {
  it("fetch then place, restore.sh in the config mount; the StatefulSet's init containers run them with RESTORE_FROM set", () => {
    const pod = restorePod({ mode: "replication", configDir: CONFIG_MOUNT });
    const parts = restorePodParts({
      restore: { from: "s3://b/p/1", awsCliImage: "aws", region: "us-east-1" },
      valkeyImage: "valkey",
      headless: "valkey-headless",
      namespace: "valkey",
      secretName: undefined,
    });
    const [fetch, place] = parts.initContainers;
    expect(fetch!.command).toEqual(["sh", `${CONFIG_MOUNT}/restore.sh`, "fetch"]);
    expect(place!.command).toEqual(["sh", `${CONFIG_MOUNT}/restore.sh`, "place"]);
    expect(fetch!.command).toEqual(pod.fetch.command);
    expect(fetch!.env!.find((e) => e.name === RESTORE_ENV.from)?.value).toBe("s3://b/p/1");
    expect(restoreScriptFiles("replication", 1)["restore.sh"]).toBe(pod.files["restore.sh"]);
  });
});

describe("a step's environment", () => {
  it("a launch that leaves a needed variable unset is refused, naming it", () => {
    const step = backupPod({ mode: "cluster", from: { seed: { host: "h", port: 1 } }, configDir: "/d" }).upload;
    expect(missingStepEnv(step, [BACKUP_ENV.workDir])).toEqual([BACKUP_ENV.uri]);
    expect(() => requireStepEnv("backup container upload", step, [BACKUP_ENV.workDir])).toThrow(
      "backup container upload: BACKUP_URI not set (its script needs them)",
    );
    expect(() => requireStepEnv("x", step, [BACKUP_ENV.workDir, BACKUP_ENV.uri])).not.toThrow();
  });
});
