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
 * - each restore-place's termination message in the pod status (what the RestoreCheck reads): the
 *   shard's manifest entry and the backup id where it placed one, why not elsewhere;
 * - the stack's own RestoreCheck passed and its report (the stack report's `restore`) gives each
 *   shard's DBSIZE equal to the manifest's count, on a member pod of the release;
 * - pods 0..2 are primaries whose DBSIZE equals their shard's manifest count;
 * - every key written before the backup reads back with its value through the client Service.
 *
 * Pods made from the same StatefulSet template then show, on real containers:
 * - a corrupted object fails restore-place (checksum) and the server never starts;
 * - a missing object fails restore-fetch;
 * - a member whose peers already form the cluster (a lost volume, `restore.from` still set) places nothing.
 */
import { expect } from "vitest";
import { pollUntil } from "../../../core/util/poll-until.js";
import { CLIENT_LABEL } from "../../../components/shared.js";
import { EXPORTER_CONTAINER } from "../../../components/valkey/metrics-pod.js";
import type { BackupManifest } from "../../../pod/backup-manifest.js";
import { parseRestoreMessage } from "../../../pod/restore-message.js";
import type { RestoreCheckReport } from "../../../components/steps/restore-check/types.js";
import { createStack, tail } from "../../e2e/support/pulumi-harness.js";
import { podsStackConfig, type PodsContext } from "./byo-on-pods.js";
import { S3_KEYS, type OuterS3 } from "./outer-s3.js";
import { runOnce } from "./probe.js";

/** The user's Secret of S3 keys (`backup.credentialsSecret`) in the stacks' namespaces. */
export const S3_SECRET = "s3-keys";
const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-restore`;

interface PodStatus {
  metadata: { name: string };
  status: {
    phase?: string;
    initContainerStatuses?: Array<{ name: string; state: { terminated?: { exitCode: number; message?: string } } }>;
    containerStatuses?: Array<{ name: string; state: { running?: unknown; waiting?: unknown; terminated?: unknown } }>;
  };
}
type Template = {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown> & { initContainers: Array<{ name: string; env: Array<{ name: string }> }> };
};

const text = (body: unknown): string => (typeof body === "string" ? body : JSON.stringify(body));

export interface BackupUnderTest {
  mode: "cluster" | "replication";
  /** The release: its StatefulSet, `<release>-headless`, `<release>-auth`. */
  release: string;
  s3: OuterS3;
  uri: string;
  manifest: BackupManifest;
  /** Keys `<keyPrefix>1..keys`, each with the value `v<n>`. */
  keys: number;
  keyPrefix: string;
  awsImage: string;
}

/** The new stack's namespace per mode. */
const nsOf = (mode: BackupUnderTest["mode"]): string =>
  mode === "cluster" ? "valkey-restore-pods" : "valkey-restore-repl-pods";

export async function expectRestoreOnRealPods(ctx: PodsContext, b: BackupUnderTest): Promise<void> {
  const { cluster, api, env } = ctx;
  const NS = nsOf(b.mode);
  const STS = b.release;
  const config = podsStackConfig(cluster, b.mode, NS, {
    benchmark: { enabled: false },
    drills: { enabled: false },
    backup: { endpoint: b.s3.endpoint, credentialsSecret: S3_SECRET, awsCliImage: b.awsImage },
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
        const r = await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
          metadata: { name: S3_SECRET },
          stringData: S3_KEYS,
        });
        return r.status === 201 || r.status === 409 ? true : `no namespace yet (${r.status})`;
      },
      { timeoutMs: 300_000, intervalMs: 1000, what: `the namespace ${NS}, for the Secret ${S3_SECRET}` },
    );
    const result = await up;
    console.log(
      `[pods] restore, ${b.mode} mode: up (members restored, ${b.mode === "cluster" ? "bootstrap, " : ""}check) ${Math.round((Date.now() - t0) / 1000)} s`,
    );
    expect(result.summary.result, tail(s.log)).toBe("succeeded");
    const report = result.outputs.report?.value as {
      topology: { ok: boolean } | null;
      restore: RestoreCheckReport | null;
    };
    expect(report.topology?.ok, tail(s.log)).toBe(true);
    // The stack's own check: each shard's DBSIZE on the primary serving it equals the manifest's count.
    expect(report.restore, tail(s.log)).toMatchObject({ from: b.uri, backup: b.manifest.id });
    expect(report.restore?.shards.map((x) => [x.shard, x.slots, x.manifestKeys, x.expires, x.keys])).toEqual(
      b.manifest.shards.map((x) => [x.shard, x.slots, x.keys, x.expires, x.keys]),
    );
    for (const x of report.restore?.shards ?? []) expect(x.primary).toMatch(new RegExp(`^${b.release}-\\d+$`));
    console.log(`[pods] restore check (the stack's): ${JSON.stringify(report.restore?.shards)}`);

    const log = async (pod: string, container: string): Promise<string> =>
      text((await api<unknown>("GET", `/api/v1/namespaces/${NS}/pods/${pod}/log?container=${container}`)).body);
    const members = b.mode === "cluster" ? 6 : 4;
    for (let i = 0; i < members; i++) {
      const place = await log(`${STS}-${i}`, "restore-place");
      const fetch = await log(`${STS}-${i}`, "restore-fetch");
      const shard = b.manifest.shards.find((x) => x.shard === (b.mode === "cluster" ? i : 0));
      const restored =
        shard === undefined
          ? ""
          : `shard ${shard.shard}: restored ${shard.keys} keys from ${b.uri}/shard-${shard.shard}.rdb (sha256 ok)`;
      if (b.mode === "cluster" && shard === undefined)
        expect(fetch, `${STS}-${i}`).toContain("this member starts empty");
      else if (i === 0) expect(place, `${STS}-${i}`).toContain(restored);
      // Replication: a member whose init ran after member 0 took replicas finds the release formed and places nothing.
      else
        expect(place, `${STS}-${i}`).toMatch(
          new RegExp(`${restored.replace(/[.()*+?[\]\\^$|]/g, "\\$&")}|not restoring: the release is already formed`),
        );
      // Its report, as the kubelet put it into the pod status (what the RestoreCheck read).
      const pod = (await api<PodStatus>("GET", `/api/v1/namespaces/${NS}/pods/${STS}-${i}`)).body;
      const text =
        pod.status.initContainerStatuses?.find((c) => c.name === "restore-place")?.state.terminated?.message ?? "";
      const said = parseRestoreMessage(text, `${STS}-${i}`);
      if (said.restore === "placed")
        expect([said.from, said.backup, said.entry], `${STS}-${i}`).toEqual([b.uri, b.manifest.id, shard]);
      else
        expect(said.reason, `${STS}-${i}`).toMatch(
          b.mode === "cluster" ? /^this member starts empty/ : /^not restoring: the release is already formed/,
        );
      if (b.mode === "cluster" || i === 0)
        expect(said.restore, `${STS}-${i}`).toBe(shard === undefined ? "none" : "placed");
    }

    // From a client pod: roles and key counts per primary, then every value, each read on the primary that serves
    // it (one connection per primary, no redirects: following MOVED through the client Service reconnected for two
    // keys in three and took 171 s for 3,000 keys on the loaded CI); a key on a member that does not serve its
    // slot answers MOVED and is not counted. Cluster mode also reads two keys through the client Service.
    const auth = ["VALKEYCLI_AUTH", "REDISCLI_AUTH"].map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: `${STS}-auth`, key: "password" } },
    }));
    const primaries = b.mode === "cluster" ? [0, 1, 2] : [0];
    const service = `valkey-cli -c -h ${STS}.${NS}.svc.cluster.local`;
    const script = [
      `for i in ${primaries.join(" ")}; do h=${STS}-$i.${STS}-headless.${NS}.svc.cluster.local; echo "pod $i $(valkey-cli -h $h role | head -n 1) $(valkey-cli -h $h dbsize)"; done`,
      `for i in ${primaries.join(" ")}; do h=${STS}-$i.${STS}-headless.${NS}.svc.cluster.local; valkey-cli -h $h --scan --pattern '${b.keyPrefix}*' > /tmp/keys; sed 's/^/GET /' /tmp/keys | valkey-cli -h $h | paste -d ' ' /tmp/keys -; done | awk '{ n++; if ($2 == "v" substr($1, ${b.keyPrefix.length + 1})) ok++ } END { print "values", ok + 0, "of", n + 0 }'`,
      ...(b.mode === "cluster"
        ? [`echo "service $(${service} GET ${b.keyPrefix}1) $(${service} GET ${b.keyPrefix}${b.keys})"`]
        : []),
    ].join("\n");
    const image = cluster.images.valkey ?? "";
    const check = await runOnce(api, {
      ns: NS,
      node: ctx.clientNode,
      image,
      labels: { [CLIENT_LABEL]: "true" },
      command: ["sh", "-c", script],
      env: auth,
      // A condition, not a duration: the pod's end (seconds here; 3 minutes when the CI's cores were loaded ~50).
      timeoutMs: 600_000,
    });
    console.log(`[pods] restore check:\n${check.log}`);
    expect(check.phase).toBe("Succeeded");
    for (const shard of b.manifest.shards) expect(check.log).toContain(`pod ${shard.shard} master ${shard.keys}`);
    expect(check.log).toContain(`values ${b.keys} of ${b.keys}`);
    if (b.mode === "cluster") expect(check.log).toContain(`service v1 v${b.keys}`);
    expect(check.log + (await log(`${STS}-0`, "restore-fetch"))).not.toContain(PASSWORD);

    await expectRefusalsOnRealPods(ctx, b, NS);
  } finally {
    await s.dispose();
  }
}

/** Pods from the release's own template (its init containers, env, mounts), a data emptyDir, on the client node. */
async function fromTemplate(
  ctx: PodsContext,
  at: { ns: string; sts: string },
  name: string,
  edit: { from: string; peers: boolean; main?: string[] },
): Promise<void> {
  const sts = await ctx.api<{ spec: { template: Template } }>(
    "GET",
    `/apis/apps/v1/namespaces/${at.ns}/statefulsets/${at.sts}`,
  );
  expect(sts.status).toBe(200);
  const spec = structuredClone(sts.body.spec.template.spec) as Template["spec"] & {
    containers: Array<{ command: string[] }>;
    volumes: Array<{ name: string }>;
  };
  for (const c of spec.initContainers)
    c.env = c.env
      .filter((e) => edit.peers || e.name !== "RESTORE_PEERS_DNS")
      .map((e) => (e.name === "RESTORE_FROM" ? { name: e.name, value: edit.from } : e));
  // The server alone: the metrics exporter beside it would keep a run-once pod from ever ending.
  spec.containers = spec.containers.filter((c) => (c as { name?: string }).name !== EXPORTER_CONTAINER);
  if (edit.main !== undefined && spec.containers[0] !== undefined) spec.containers[0].command = edit.main;
  for (const k of ["affinity", "topologySpreadConstraints", "nodeSelector"]) delete spec[k];
  const { status } = await ctx.api("POST", `/api/v1/namespaces/${at.ns}/pods`, {
    metadata: { name, labels: { "probe.test/role": "restore", [CLIENT_LABEL]: "true" } },
    spec: {
      ...spec,
      nodeName: ctx.clientNode,
      restartPolicy: "Never",
      volumes: [...spec.volumes, { name: "data", emptyDir: {} }],
    },
  });
  expect(status).toBe(201);
}

async function ended(ctx: PodsContext, NS: string, name: string): Promise<PodStatus> {
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

async function expectRefusalsOnRealPods(ctx: PodsContext, b: BackupUnderTest, NS: string): Promise<void> {
  const { aws } = b.s3;
  const at = { ns: NS, sts: b.release };
  // The shards the probes restore: by ordinal in cluster mode; shard 0 for every replication member.
  const [bad, gone] = b.mode === "cluster" ? [1, 2] : [0, 0];
  const copy = (to: string): string => {
    aws(["s3", "cp", "--recursive", "--only-show-errors", `${b.uri}/`, `${to}/`]);
    return to;
  };
  const corrupt = copy(`${b.uri}-corrupt`);
  const rdb = aws(["s3", "cp", `${corrupt}/shard-${bad}.rdb`, "-"]);
  rdb[rdb.length >> 1] = (rdb[rdb.length >> 1] as number) ^ 0xff;
  aws(["s3", "cp", "-", `${corrupt}/shard-${bad}.rdb`], rdb);
  const missing = copy(`${b.uri}-missing`);
  aws(["s3", "rm", "--only-show-errors", `${missing}/shard-${gone}.rdb`]);

  await fromTemplate(ctx, at, "corrupt-1", { from: corrupt, peers: false });
  await fromTemplate(ctx, at, "missing-2", { from: missing, peers: false });
  // Ordinal 0, the real backup, the formed release's peers: a lost volume of a running release.
  await fromTemplate(ctx, at, "lost-volume-0", { from: b.uri, peers: true, main: ["sh", "-c", "ls -a /data"] });
  const log = async (pod: string, container: string): Promise<string> =>
    text((await ctx.api<unknown>("GET", `/api/v1/namespaces/${NS}/pods/${pod}/log?container=${container}`)).body);
  try {
    const c = await ended(ctx, NS, "corrupt-1");
    expect(c.status.phase).toBe("Failed");
    expect(await log("corrupt-1", "restore-place")).toMatch(
      new RegExp(
        `shard ${bad}: checksum mismatch: .*shard-${bad}\\.rdb has sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}`,
      ),
    );
    // valkey-server never ran: the main container never left `waiting`.
    expect(c.status.containerStatuses?.map((x) => Object.keys(x.state))).toEqual([["waiting"]]);
    const m = await ended(ctx, NS, "missing-2");
    expect(m.status.phase).toBe("Failed");
    expect(await log("missing-2", "restore-fetch")).toMatch(
      new RegExp(`shard ${gone}: cannot fetch .*shard-${gone}\\.rdb \\(missing object\\?\\)`),
    );
    expect(m.status.containerStatuses?.map((x) => Object.keys(x.state))).toEqual([["waiting"]]);
    const l = await ended(ctx, NS, "lost-volume-0");
    expect(l.status.phase).toBe("Succeeded");
    expect(await log("lost-volume-0", "restore-place")).toMatch(
      b.mode === "cluster"
        ? /not restoring: the release is already formed \(.* knows 6 cluster nodes\)/
        : /not restoring: the release is already formed \(.* (is a replica linked to its primary|is a replica whose link to its primary is down for \d+s|is a primary with 3 replica\(s\))\)/,
    );
    const listing = await log("lost-volume-0", "valkey");
    expect(listing).not.toContain("restored-from");
    expect(listing).not.toContain("dump.rdb");
  } finally {
    for (const p of ["corrupt-1", "missing-2", "lost-volume-0"])
      await ctx.api("DELETE", `/api/v1/namespaces/${NS}/pods/${p}?gracePeriodSeconds=0`);
  }
}
