/**
 * `restore.from` in the program under Pulumi mocks: on eks the RestoreAccess role (GetObject under
 * that one backup only) and the Pod Identity association of the members' own ServiceAccount; the
 * member pods' two init containers (fetch in the AWS CLI image, place in the Valkey image) over
 * restore.sh in the release's ConfigMap with the new cluster's slot ranges; the egress policy the
 * fetch needs; the bootstrap told the members are restored; on byo the user's endpoint and Secret;
 * restore-place's termination message (its report) read from the kubelet's file; the RestoreCheck
 * step after the TopologyCheck and before the benchmark, re-run by `from` only, its report in the
 * stack report. The password never appears in any input.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  awsMockInvokes,
  awsMockOutputs,
  installMocks,
  settle,
  valueOf,
  type RecordedResource,
} from "../support/pulumi-mocks.js";
import { versions } from "../../versions.js";

/** What the RestoreCheck returns once it ran (it does not run under mocks). */
const RESTORE_REPORT = {
  from: "s3://team-backups/prod/valkey/20261125T031700Z",
  backup: "20261125T031700Z",
  shards: [{ shard: 0, slots: ["0-5460"], manifestKeys: 1012, expires: 0, keys: 1012, primary: "valkey-cluster-0" }],
};
const recorder = installMocks({
  invokes: awsMockInvokes,
  outputs: (r) => (r.name === "valkey-restore-check-run" ? { ...r.inputs, report: RESTORE_REPORT } : awsMockOutputs(r)),
});
const { loadStackFile } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const pulumi = await import("@pulumi/pulumi");

const PASSWORD = "pw-restore-7Qx!unique";
const FROM = "s3://team-backups/prod/valkey/20261125T031700Z";
beforeEach(() => recorder.reset());

const kubeconfigPath = join(mkdtempSync(join(tmpdir(), "restore-program-")), "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

async function program(
  file: string,
  edit: (c: ReturnType<typeof loadStackFile>["config"]) => void,
): Promise<ReturnType<typeof runProgram>> {
  const { config } = loadStackFile(file);
  config.restore = { from: FROM };
  if (config.platform === "byo") config.byo = { ...config.byo, kubeconfig: kubeconfigPath };
  edit(config);
  const out = runProgram({ stack: "s", config, password: pulumi.secret(PASSWORD) });
  await settle();
  return out;
}

/**
 * The RestoreCheck's run: a child of its component, after the TopologyCheck, before the benchmark, re-run by `from`
 * only.
 */
function restoreCheckRun(): RecordedResource {
  expect(recorder.get("valkey-on-eks:steps:RestoreCheck", "valkey-restore-check")).toBeDefined();
  const run = recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-restore-check-run");
  expect(run.parent).toBe("valkey-restore-check");
  expect(run.dependsOn).toContain("valkey-check-run");
  expect(recorder.get("valkey-on-eks:benchmark:BenchmarkJob", "valkey-benchmark").dependsOn).toContain(
    "valkey-restore-check-run",
  );
  // Not a follower: nothing but a new `from` re-runs it.
  expect(run.inputs).not.toHaveProperty("triggers");
  expect(run.redacted.password).toBe("[secret]");
  return run;
}

type C = {
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  name: string;
  image: string;
  command: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  envFrom?: unknown;
  volumeMounts: { name: string; mountPath: string }[];
};
type Pod = { serviceAccountName?: string; initContainers?: C[]; containers: C[]; volumes: { name: string }[] };
type Egress = { to?: { ipBlock?: { cidr: string } }[]; ports: { port: number }[] }[];

const memberPod = (): Pod =>
  (
    recorder.resources.find((r) => r.type === "kubernetes:apps/v1:StatefulSet" && r.name.endsWith("-members"))?.inputs
      .spec as { template: { spec: Pod } }
  ).template.spec;

describe("restore.from in the program", () => {
  it("eks cluster stack: read-only Pod Identity access to that backup, two init containers before valkey-server, egress to S3, the restore bootstrap", async () => {
    await program("stacks/Pulumi.cluster.yaml", () => undefined);
    const policy = JSON.parse(
      recorder.get("aws:iam/rolePolicy:RolePolicy", "valkey-restore-access-access").inputs.policy as string,
    ) as {
      Statement: { Action: string; Resource: string; Condition?: unknown }[];
    };
    expect(policy.Statement.map((s) => [s.Action, s.Resource])).toEqual([
      ["s3:GetObject", "arn:aws:s3:::team-backups/prod/valkey/20261125T031700Z/*"],
      ["s3:ListBucket", "arn:aws:s3:::team-backups"],
    ]);
    expect(policy.Statement[1]?.Condition).toEqual({ StringLike: { "s3:prefix": ["prod/valkey/20261125T031700Z/*"] } });
    expect(
      recorder.get("aws:eks/podIdentityAssociation:PodIdentityAssociation", "valkey-restore-access-identity").inputs,
    ).toMatchObject({
      namespace: "valkey",
      serviceAccount: "valkey-cluster-restore",
    });
    expect(recorder.get("kubernetes:core/v1:ServiceAccount", "valkey-cluster-restore-sa").inputs).toMatchObject({
      metadata: { name: "valkey-cluster-restore", namespace: "valkey" },
      automountServiceAccountToken: false,
    });

    const pod = memberPod();
    expect(pod.serviceAccountName).toBe("valkey-cluster-restore");
    const [fetch, place] = pod.initContainers ?? [];
    expect([fetch?.name, fetch?.image, fetch?.command]).toEqual([
      "restore-fetch",
      versions.AWS_CLI_IMAGE,
      ["sh", "/etc/valkey/restore.sh", "fetch"],
    ]);
    const env = (c: C | undefined): Record<string, unknown> =>
      Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env(fetch)).toMatchObject({ RESTORE_FROM: FROM, POD_NAME: { fieldRef: { fieldPath: "metadata.name" } } });
    expect(env(fetch).AWS_REGION).toBe(loadStackFile("stacks/Pulumi.cluster.yaml").config.aws.region);
    // No static keys on eks: Pod Identity's agent gives the credentials.
    expect(fetch?.envFrom).toBeUndefined();
    expect(Object.keys(env(fetch))).not.toContain("AWS_ENDPOINT_URL");
    expect([place?.name, place?.image, place?.command]).toEqual([
      "restore-place",
      pod.containers[0]?.image,
      ["sh", "/etc/valkey/restore.sh", "place"],
    ]);
    // Its report (what it placed, or why nothing) goes to the kubelet's file, into the pod status.
    expect([place?.terminationMessagePath, place?.terminationMessagePolicy]).toEqual(["/dev/termination-log", "File"]);
    expect(env(place)).toMatchObject({
      RESTORE_PEERS_DNS: "valkey-cluster-headless.valkey.svc.cluster.local",
      RESTORE_PEERS_PORT: "6379",
      REDISCLI_AUTH: { secretKeyRef: { name: "valkey-cluster-auth", key: "password" } },
    });
    for (const c of [fetch, place])
      expect(c?.volumeMounts.map((m) => m.mountPath)).toEqual(expect.arrayContaining(["/data", "/etc/valkey"]));

    const data = recorder.get("kubernetes:core/v1:ConfigMap", "valkey-cluster-config").inputs.data as Record<
      string,
      string
    >;
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    expect(config.valkey.cluster.primaries).toBe(3);
    expect(data["restore.sh"]).toMatch(/^planned_slots='0-5460 5461-10921 10922-16383'$/m);
    expect(data["restore.sh"]).toContain(`planned_shards=3`);

    const egress = (
      recorder.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "valkey-cluster-restore-egress").inputs.spec as {
        egress: Egress;
      }
    ).egress;
    expect(egress.map((e) => [e.to?.[0]?.ipBlock?.cidr ?? "any", e.ports.map((p) => p.port)])).toEqual([
      ["any", [443]],
      ["169.254.170.23/32", [80]],
    ]);
    const run = recorder.resources.find((r) => r.name === "valkey-cluster-bootstrap-run");
    expect(run?.inputs.restored).toBe(true);
    for (const r of recorder.resources)
      expect(JSON.stringify(r.redacted), `${r.type} ${r.name}`).not.toContain(PASSWORD);
  });

  it("eks cluster stack: the RestoreCheck reads the members' reports after the TopologyCheck, before the benchmark; its report goes into the stack report", async () => {
    const out = await program("stacks/Pulumi.cluster.yaml", () => undefined);
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    expect(restoreCheckRun().inputs).toMatchObject({
      from: FROM,
      mode: "cluster",
      namespace: "valkey",
      selector: recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-run").inputs.selector,
      connector: config.checks.connector,
      headlessService: "valkey-cluster-headless",
    });
    expect((await valueOf(out.report)).restore).toEqual(RESTORE_REPORT);
  });

  it("byo replication stack: no AWS resource, the user's endpoint and Secret, egress to the endpoint's port only; without restore.from none of it", async () => {
    const endpoint = "http://10.231.0.1:5056";
    await program("stacks/Pulumi.byo.yaml", (c) => {
      c.valkey.mode = "replication";
      c.backup = { ...c.backup, endpoint, credentialsSecret: "s3-keys" };
    });
    expect(recorder.resources.filter((r) => r.type.startsWith("aws:")).map((r) => r.type)).toEqual([]);
    const pod = memberPod();
    expect(pod.serviceAccountName).toBeUndefined();
    const [fetch] = pod.initContainers ?? [];
    expect(fetch?.envFrom).toEqual([{ secretRef: { name: "s3-keys" } }]);
    expect(fetch?.env.find((e) => e.name === "AWS_ENDPOINT_URL")?.value).toBe(endpoint);
    const data = recorder.get("kubernetes:core/v1:ConfigMap", "valkey-config").inputs.data as Record<string, string>;
    expect(data["restore.sh"]).toMatch(/^mode='replication'$/m);
    const egress = (
      recorder.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "valkey-restore-egress").inputs.spec as {
        egress: Egress;
      }
    ).egress;
    expect(egress.map((e) => e.ports.map((p) => p.port))).toEqual([[5056]]);
    // The RestoreCheck finds the primary through the Sentinels, as the TopologyCheck does.
    const check = recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-run").inputs;
    expect(restoreCheckRun().inputs).toMatchObject({
      from: FROM,
      mode: "replication",
      selector: check.selector,
      sentinel: check.sentinel,
    });
    expect((check.sentinel as { port: number }).port).toBe(26379);

    recorder.reset();
    const out = await program("stacks/Pulumi.byo.yaml", (c) => {
      c.restore = {};
    });
    expect(memberPod().initContainers).toBeUndefined();
    expect(recorder.resources.filter((r) => r.name.includes("restore")).map((r) => r.name)).toEqual([]);
    expect(recorder.resources.filter((r) => r.type.includes("RestoreCheck"))).toEqual([]);
    expect((await valueOf(out.report)).restore).toBeNull();
  });
});
