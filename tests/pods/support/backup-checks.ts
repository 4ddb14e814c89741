/**
 * The backup on real pods: the byo stack in a mode (cluster 3 x 1, replication 1 + 3) with `backup` on, writing to an
 * S3-compatible server (moto[server], started in kube:local's outer network namespace on the
 * bridge address every node routes to, so pods reach it as they would reach MinIO), with the keys
 * in a Secret the test creates after the first `up` (`backup.credentialsSecret`). A Job made from
 * the CronJob's own template runs both steps in real containers: `snapshot-from` in the valkey
 * image (the plan from the live topology through the client Service, `valkey-cli --rdb` from each
 * shard's replica through the NetworkPolicies, valkey-check-rdb), then `upload` in the locally
 * built AWS CLI image. Then: the manifest in S3 names 3 shards with the cluster's slot ranges,
 * snapshotted from replicas, and its key counts add up to the keys written; each RDB's sha256 is
 * the manifest's. Then the stack is destroyed and support/restore-checks.ts restores the backup
 * into a new one.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { pollUntil } from "../../../core/util/poll-until.js";
import { kubernetesDrillApi } from "../../../components/steps/failure-drill/kube-api.js";
import { kubeDeps } from "../../../components/steps/kit/kube-access.js";
import { kubernetesVerifier, type VerifierInputs } from "../../../components/steps/topology-check/implementation.js";
import { parseManifest, type BackupManifest } from "../../../pod/backup-manifest.js";
import { createStack, tail } from "../../e2e/support/pulumi-harness.js";
import { podsStackConfig, type PodsContext } from "./byo-on-pods.js";
import { S3_KEYS, startOuterS3 } from "./outer-s3.js";
import { expectRestoreOnRealPods, S3_SECRET } from "./restore-checks.js";

const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-secret`;
const BUCKET = "valkey-backups";
const PREFIX = "pods";
const KEYS = 3000;

/** A log body as text (a container that never ran answers a Status object). */
export const text = (body: unknown): string => (typeof body === "string" ? body : JSON.stringify(body));

/** Per mode: its namespace, the S3 server's port (the two modes run side by side), the release's objects. */
export const BACKUP_MODES = {
  cluster: {
    ns: "valkey-backup-pods",
    port: 5055,
    release: "valkey-cluster",
    writer: "valkey-cluster-0",
    cli: "valkey-cli -c",
  },
  replication: { ns: "valkey-backup-repl-pods", port: 5057, release: "valkey", writer: "valkey-0", cli: "valkey-cli" },
} as const;

/**
 * The whole check (tests/pods/byo-stack.test.ts runs it beside the two lifecycles); needs the S3 tools of .ci/setup.
 */
export async function expectBackupOnRealPods(ctx: PodsContext, mode: "cluster" | "replication"): Promise<void> {
  const m = BACKUP_MODES[mode];
  const NS = m.ns;
  const { cluster, api, env } = ctx;
  const awsImage = cluster.images.awscli;
  if (awsImage === undefined)
    throw new Error(
      "no awscli image in the running local cluster: restart it (npm run kube:local -- down, then up) to import the images",
    );
  const s3 = await startOuterS3(m.port);
  const { aws } = s3;
  try {
    aws(["s3", "mb", `s3://${BUCKET}`]);
    const config = podsStackConfig(cluster, mode, NS, {
      benchmark: { enabled: false },
      drills: { enabled: false },
      // Far from now: the test runs the CronJob's template itself.
      backup: {
        enabled: true,
        schedule: "0 0 1 1 *",
        bucket: BUCKET,
        prefix: PREFIX,
        endpoint: s3.endpoint,
        credentialsSecret: S3_SECRET,
        awsCliImage: awsImage,
      },
    });
    const s = await createStack(env, config, { password: PASSWORD });
    let backup: { uri: string; manifest: BackupManifest } | undefined;
    try {
      const first = await s.stack.up({ onOutput: (o) => s.log.push(o) });
      expect(first.summary.result, tail(s.log)).toBe("succeeded");
      const kube = await kubernetesDrillApi(readFileSync(cluster.kubeconfig, "utf8"));
      // Keys through valkey-cli in a member (its REDISCLI_AUTH is the release's password): cluster,
      // -c from any member; replication, on member 0, the primary of a first start.
      await kube.exec(NS, m.writer, "valkey", [
        "sh",
        "-c",
        `i=1; while [ $i -le ${KEYS} ]; do echo "SET bk:$i v$i"; i=$((i+1)); done | ${m.cli} >/dev/null`,
      ]);
      const secret = await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
        metadata: { name: S3_SECRET },
        stringData: S3_KEYS,
      });
      expect(secret.status).toBe(201);
      const cron = await api<{ spec: { jobTemplate: { spec: unknown } } }>(
        "GET",
        `/apis/batch/v1/namespaces/${NS}/cronjobs/${m.release}-backup`,
      );
      expect(cron.status).toBe(200);
      const job = await api("POST", `/apis/batch/v1/namespaces/${NS}/jobs`, {
        metadata: { name: "backup-now" },
        spec: cron.body.spec.jobTemplate.spec,
      });
      expect(job.status).toBe(201);
      const t0 = Date.now();
      const logs = async (): Promise<string> => {
        const pods = await api<{ items: Array<{ metadata: { name: string } }> }>(
          "GET",
          `/api/v1/namespaces/${NS}/pods?labelSelector=job-name%3Dbackup-now`,
        );
        const out: string[] = [];
        for (const p of pods.body.items)
          for (const c of ["snapshot", "upload"])
            out.push(
              `--- ${p.metadata.name}/${c}\n${text((await api<unknown>("GET", `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log?container=${c}`)).body)}`,
            );
        return out.join("\n");
      };
      await pollUntil(
        async () => {
          const st = await api<{ status: { succeeded?: number; failed?: number } }>(
            "GET",
            `/apis/batch/v1/namespaces/${NS}/jobs/backup-now`,
          );
          if ((st.body.status.failed ?? 0) > 0) throw new Error(`the backup Job failed:\n${await logs()}`);
          return (st.body.status.succeeded ?? 0) > 0 ? true : "not done";
        },
        { timeoutMs: 300_000, intervalMs: 2000, what: "the backup Job" },
      );
      const runLog = await logs();
      console.log(`[pods] backup Job done in ${Math.round((Date.now() - t0) / 1000)} s\n${runLog}`);

      const listing = aws(["s3", "ls", `s3://${BUCKET}/${PREFIX}/`, "--recursive"]).toString();
      const manifestKey = /(\S+\/manifest\.json)\s*$/m.exec(listing)?.[1];
      expect(manifestKey, listing).toBeDefined();
      const manifest = parseManifest(aws(["s3", "cp", `s3://${BUCKET}/${manifestKey}`, "-"]).toString());
      const dir = (manifestKey as string).slice(0, -"manifest.json".length);
      backup = { uri: `s3://${BUCKET}/${dir.replace(/\/$/, "")}`, manifest };
      expect(manifest.mode).toBe(mode);
      expect(manifest.shards.map((x) => x.slots).sort()).toEqual(
        mode === "cluster" ? [["0-5460"], ["10922-16383"], ["5461-10921"]] : [[]],
      );
      expect(manifest.shards.reduce((n, x) => n + x.keys, 0)).toBe(KEYS);
      for (const shard of manifest.shards) {
        const rdb = aws(["s3", "cp", `s3://${BUCKET}/${dir}${shard.object}`, "-"]);
        expect(createHash("sha256").update(rdb).digest("hex"), shard.object).toBe(shard.sha256);
      }
      // Each shard from a replica (the plan's choice with every link up), not from its primary.
      const state = (await s.stack.exportStack()).deployment as {
        resources: Array<{ urn: string; inputs?: Record<string, unknown> }>;
      };
      const check = state.resources.find((r) => r.urn.endsWith("::valkey-check-run"))?.inputs as
        VerifierInputs | undefined;
      if (check === undefined) throw new Error("no valkey-check-run resource in the stack");
      const vi: VerifierInputs = {
        ...check,
        kubeconfig: readFileSync(cluster.kubeconfig, "utf8"),
        password: PASSWORD,
        connector: "port-forward",
      };
      const v = await kubernetesVerifier(vi, kubeDeps(vi));
      try {
        const report = await v.verify();
        const replicas = report.shards.flatMap((x) => x.replicas.map((r) => r.address));
        for (const shard of manifest.shards)
          expect(replicas, `shard ${shard.shard} from ${shard.member}`).toContain(shard.member);
      } finally {
        await v.close();
      }
      expect(runLog).not.toContain(PASSWORD);
      console.log(
        `[pods] backup manifest: ${manifest.shards.map((x) => `shard ${x.shard} ${x.slots.join(",")} ${x.keys} keys ${x.bytes} B from ${x.member}`).join("; ")}`,
      );
    } finally {
      await s.dispose();
    }
    // The backup's stack is gone (destroy above): restore it into a new one.
    if (backup !== undefined)
      await expectRestoreOnRealPods(ctx, {
        ...backup,
        mode,
        release: m.release,
        s3,
        keys: KEYS,
        keyPrefix: "bk:",
        awsImage,
      });
  } finally {
    s3.stop();
  }
}
