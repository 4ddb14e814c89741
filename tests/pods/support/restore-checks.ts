/**
 * The restore on real pods, after support/backup-checks.ts backed a 3 x 1 cluster up and destroyed
 * its stack: a NEW byo stack (its own namespace, its own password) with `restore.from` naming that
 * backup. The test creates the S3 keys' Secret as soon as the stack made the namespace (the members
 * wait for it). Each member runs the init containers of the deployed template: restore-fetch in the
 * AWS CLI image through the restore egress policy, restore-place in the Valkey image. The
 * ClusterBootstrap pins pods 0..2 as the shards' primaries and the TopologyCheck passes.
 *
 * Checked from outside:
 * - the init logs name each shard's restore with the manifest's key count;
 * - pods 0..2 are primaries whose DBSIZE equals their shard's manifest count;
 * - every key written before the backup reads back with its value through the client Service.
 *
 * Pods made from the same StatefulSet template then show, on real containers:
 * - a corrupted object fails restore-place (checksum) and the server never starts;
 * - a missing object fails restore-fetch;
 * - a member whose peers already form the cluster (a lost volume, `restore.from` still set) places nothing.
 */
import { expect } from "vitest";
import { pollUntil } from "../../../benchmarks/util/poll-until.js";
import { CLIENT_LABEL } from "../../../components/shared.js";
import type { BackupManifest } from "../../../pod/backup-manifest.js";
import { createStack, tail } from "../../e2e/support/pulumi-harness.js";
import { podsStackConfig, type PodsContext } from "./byo-on-pods.js";
import { aws, S3_ENDPOINT, S3_KEYS } from "./outer-s3.js";
import { runOnce } from "./probe.js";

/** The user's Secret of S3 keys (`backup.credentialsSecret`) in the stacks' namespaces. */
export const S3_SECRET = "s3-keys";
const NS = "valkey-restore-pods";
const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-restore`;
const STS = "valkey-cluster";

interface PodStatus {
  metadata: { name: string };
  status: {
    phase?: string;
    initContainerStatuses?: Array<{ name: string; state: { terminated?: { exitCode: number } } }>;
    containerStatuses?: Array<{ name: string; state: { running?: unknown; waiting?: unknown; terminated?: unknown } }>;
  };
}
type Template = {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown> & { initContainers: Array<{ name: string; env: Array<{ name: string }> }> };
};

const text = (body: unknown): string => (typeof body === "string" ? body : JSON.stringify(body));

export interface BackupUnderTest {
  uri: string;
  manifest: BackupManifest;
  /** Keys `<keyPrefix>1..keys`, each with the value `v<n>`. */
  keys: number;
  keyPrefix: string;
  awsImage: string;
}

export async function expectRestoreOnRealPods(ctx: PodsContext, b: BackupUnderTest): Promise<void> {
  const { cluster, api, env } = ctx;
  const config = podsStackConfig(cluster, "cluster", NS, {
    benchmark: { enabled: false },
    drills: { enabled: false },
    backup: { endpoint: S3_ENDPOINT, credentialsSecret: S3_SECRET, awsCliImage: b.awsImage },
    restore: { from: b.uri },
  });
  const s = await createStack(env, config, { password: PASSWORD });
  try {
    const t0 = Date.now();
    let ended = false;
    const up = s.stack.up({ onOutput: (o) => s.log.push(o) }).finally(() => {
      ended = true;
    });
    up.catch(() => undefined); // awaited below
    await pollUntil(
      async () => {
        if (ended) throw new Error(`up ended before the namespace ${NS} existed:\n${tail(s.log)}`);
        const r = await api("POST", `/api/v1/namespaces/${NS}/secrets`, { metadata: { name: S3_SECRET }, stringData: S3_KEYS });
        return r.status === 201 || r.status === 409 ? true : `no namespace yet (${r.status})`;
      },
      { timeoutMs: 300_000, intervalMs: 1000, what: `the namespace ${NS}, for the Secret ${S3_SECRET}` },
    );
    const result = await up;
    console.log(`[pods] restore: up (6 members, 3 restored; bootstrap; check) ${Math.round((Date.now() - t0) / 1000)} s`);
    expect(result.summary.result, tail(s.log)).toBe("succeeded");
    expect((result.outputs.report?.value as { topology: { ok: boolean } | null }).topology?.ok, tail(s.log)).toBe(true);

    const log = async (pod: string, container: string): Promise<string> =>
      text((await api<unknown>("GET", `/api/v1/namespaces/${NS}/pods/${pod}/log?container=${container}`)).body);
    for (let i = 0; i < 6; i++) {
      const place = await log(`${STS}-${i}`, "restore-place");
      const fetch = await log(`${STS}-${i}`, "restore-fetch");
      const shard = b.manifest.shards.find((x) => x.shard === i);
      if (shard !== undefined) expect(place, `${STS}-${i}`).toContain(`shard ${i}: restored ${shard.keys} keys from ${b.uri}/shard-${i}.rdb (sha256 ok)`);
      else expect(fetch, `${STS}-${i}`).toContain("this member starts empty");
    }

    // Through the client Service from a client pod: roles and key counts per pod, then every value.
    const auth = ["VALKEYCLI_AUTH", "REDISCLI_AUTH"].map((name) => ({ name, valueFrom: { secretKeyRef: { name: `${STS}-auth`, key: "password" } } }));
    const script = [
      `for i in 0 1 2; do h=${STS}-$i.${STS}-headless.${NS}.svc.cluster.local; echo "pod $i $(valkey-cli -h $h role | head -n 1) $(valkey-cli -h $h dbsize)"; done`,
      `i=1; while [ $i -le ${b.keys} ]; do echo "GET ${b.keyPrefix}$i"; i=$((i+1)); done | valkey-cli -c -h ${STS}.${NS}.svc.cluster.local | awk '{ n++; if ($0 == "v" n) ok++ } END { print "values", ok + 0, "of", n + 0 }'`,
    ].join("\n");
    const image = cluster.images.valkey ?? "";
    const check = await runOnce(api, { ns: NS, node: ctx.clientNode, image, labels: { [CLIENT_LABEL]: "true" }, command: ["sh", "-c", script], env: auth });
    console.log(`[pods] restore check:\n${check.log}`);
    expect(check.phase).toBe("Succeeded");
    for (const shard of b.manifest.shards) expect(check.log).toContain(`pod ${shard.shard} master ${shard.keys}`);
    expect(check.log).toContain(`values ${b.keys} of ${b.keys}`);
    expect(check.log + (await log(`${STS}-0`, "restore-fetch"))).not.toContain(PASSWORD);

    await expectRefusalsOnRealPods(ctx, b);
  } finally {
    await s.dispose();
  }
}

/** Pods from the release's own template (its init containers, env, mounts), a data emptyDir, on the client node. */
async function fromTemplate(ctx: PodsContext, name: string, edit: { from: string; peers: boolean; main?: string[] }): Promise<void> {
  const sts = await ctx.api<{ spec: { template: Template } }>("GET", `/apis/apps/v1/namespaces/${NS}/statefulsets/${STS}`);
  expect(sts.status).toBe(200);
  const spec = structuredClone(sts.body.spec.template.spec) as Template["spec"] & {
    containers: Array<{ command: string[] }>;
    volumes: Array<{ name: string }>;
  };
  for (const c of spec.initContainers)
    c.env = c.env.filter((e) => edit.peers || e.name !== "RESTORE_PEERS_DNS").map((e) => (e.name === "RESTORE_FROM" ? { name: e.name, value: edit.from } : e));
  if (edit.main !== undefined && spec.containers[0] !== undefined) spec.containers[0].command = edit.main;
  for (const k of ["affinity", "topologySpreadConstraints", "nodeSelector"]) delete spec[k];
  const { status } = await ctx.api("POST", `/api/v1/namespaces/${NS}/pods`, {
    metadata: { name, labels: { "probe.test/role": "restore", [CLIENT_LABEL]: "true" } },
    spec: { ...spec, nodeName: ctx.clientNode, restartPolicy: "Never", volumes: [...spec.volumes, { name: "data", emptyDir: {} }] },
  });
  expect(status).toBe(201);
}

async function ended(ctx: PodsContext, name: string): Promise<PodStatus> {
  let last: PodStatus | undefined;
  await pollUntil(
    async () => {
      last = (await ctx.api<PodStatus>("GET", `/api/v1/namespaces/${NS}/pods/${name}`)).body;
      return last.status.phase === "Failed" || last.status.phase === "Succeeded" ? true : `phase ${last.status.phase}`;
    },
    { timeoutMs: 180_000, intervalMs: 1000, what: `pod ${name} to end` },
  );
  return last as PodStatus;
}

async function expectRefusalsOnRealPods(ctx: PodsContext, b: BackupUnderTest): Promise<void> {
  const copy = (to: string): string => {
    aws(["s3", "cp", "--recursive", "--only-show-errors", `${b.uri}/`, `${to}/`]);
    return to;
  };
  const corrupt = copy(`${b.uri}-corrupt`);
  const rdb = aws(["s3", "cp", `${corrupt}/shard-1.rdb`, "-"]);
  rdb[rdb.length >> 1] = (rdb[rdb.length >> 1] as number) ^ 0xff;
  aws(["s3", "cp", "-", `${corrupt}/shard-1.rdb`], rdb);
  const missing = copy(`${b.uri}-missing`);
  aws(["s3", "rm", "--only-show-errors", `${missing}/shard-2.rdb`]);

  await fromTemplate(ctx, "corrupt-1", { from: corrupt, peers: false });
  await fromTemplate(ctx, "missing-2", { from: missing, peers: false });
  // Ordinal 0, the real backup, the formed release's peers: a lost volume of a running cluster.
  await fromTemplate(ctx, "lost-volume-0", { from: b.uri, peers: true, main: ["sh", "-c", "ls -a /data"] });
  const log = async (pod: string, container: string): Promise<string> =>
    text((await ctx.api<unknown>("GET", `/api/v1/namespaces/${NS}/pods/${pod}/log?container=${container}`)).body);
  try {
    const c = await ended(ctx, "corrupt-1");
    expect(c.status.phase).toBe("Failed");
    expect(await log("corrupt-1", "restore-place")).toMatch(
      /shard 1: checksum mismatch: .*shard-1\.rdb has sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}/,
    );
    // valkey-server never ran: the main container never left `waiting`.
    expect(c.status.containerStatuses?.map((x) => Object.keys(x.state))).toEqual([["waiting"]]);
    const m = await ended(ctx, "missing-2");
    expect(m.status.phase).toBe("Failed");
    expect(await log("missing-2", "restore-fetch")).toMatch(/shard 2: cannot fetch .*shard-2\.rdb \(missing object\?\)/);
    expect(m.status.containerStatuses?.map((x) => Object.keys(x.state))).toEqual([["waiting"]]);
    const l = await ended(ctx, "lost-volume-0");
    expect(l.status.phase).toBe("Succeeded");
    expect(await log("lost-volume-0", "restore-place")).toMatch(/not restoring: the release is already formed \(.* knows 6 cluster nodes\)/);
    const listing = await log("lost-volume-0", "valkey");
    expect(listing).not.toContain("restored-from");
    expect(listing).not.toContain("dump.rdb");
  } finally {
    for (const p of ["corrupt-1", "missing-2", "lost-volume-0"]) await ctx.api("DELETE", `/api/v1/namespaces/${NS}/pods/${p}?gracePeriodSeconds=0`);
  }
}
