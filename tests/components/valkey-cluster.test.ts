import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installMocks, settle } from "../support/pulumi-mocks.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL, ROLE_LABEL, releaseLabels } from "../../components/shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { renderPreStopScript } from "../../pod/prestop-script.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import {
  PASSWORD,
  PLACEMENT,
  cli,
  cliPath,
  containerOf,
  manifest,
  podSpecOf,
  podTree,
  rmSync,
  run,
  valkeyConfig,
} from "../support/valkey-fixtures.js";
import type {
  ConfigMap,
  NetworkPolicy,
  PodDisruptionBudget,
  PodSpec,
  Service,
  StatefulSet,
} from "../../components/valkey/k8s-types.js";

const mocks = installMocks();
const { ValkeyCluster } = await import("../../components/valkey-cluster.js");
const pulumi = await import("@pulumi/pulumi");

const svc = (name: string): Service => manifest<Service>(mocks.get("kubernetes:core/v1:Service", name));
const members = releaseLabels("valkey-cluster");

describe("ValkeyCluster", () => {
  let comp: InstanceType<typeof ValkeyCluster>;
  let sts: StatefulSet;
  let pod: PodSpec;
  beforeAll(async () => {
    comp = new ValkeyCluster("vc", {
      namespace: "data",
      valkey: valkeyConfig({ mode: "cluster", cluster: { primaries: 3, replicasPerPrimary: 2, nodeTimeoutMs: 12000 } }),
      placement: PLACEMENT,
      password: pulumi.secret(PASSWORD),
    });
    await settle();
    sts = manifest<StatefulSet>(mocks.get("kubernetes:apps/v1:StatefulSet", "vc-members"));
    pod = podSpecOf(sts);
  });

  it("creates the expected children and plain outputs; P x (1 + M) pods", () => {
    expect(
      mocks.resources
        .filter((r) => r.type.startsWith("kubernetes:"))
        .map((r) => r.name)
        .sort(),
    ).toEqual(["vc-client", "vc-config", "vc-headless", "vc-members", "vc-netpol", "vc-pdb", "vc-secret"].sort());
    expect(sts.spec?.replicas).toBe(3 * (1 + 2));
    expect(comp.pods).toHaveLength(9);
    expect(comp.pods[8]).toEqual({
      name: "valkey-cluster-8",
      dnsName: "valkey-cluster-8.valkey-cluster-headless.data.svc.cluster.local",
    });
    expect(comp.clientHost).toBe("valkey-cluster.data.svc.cluster.local");
    expect(comp.headlessService).toBe("valkey-cluster-headless");
    expect([comp.port, comp.busPort, comp.secretName, comp.passwordKey]).toEqual([
      6379,
      16379,
      "valkey-cluster-auth",
      "password",
    ]);
    expect(comp.podSelector).toEqual(members);
  });

  it("spreads members hard over the zones, softly per node, with the placement's selectors", () => {
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: "DoNotSchedule",
        minDomains: 3,
        labelSelector: { matchLabels: members },
      },
    ]);
    expect(pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: ZONE_LABEL, operator: "In", values: PLACEMENT.zones }] },
    ]);
    expect(pod.affinity?.podAntiAffinity).toEqual({
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: members } },
        },
      ],
    });
    expect(pod.nodeSelector).toEqual(PLACEMENT.nodeSelector);
    expect(pod.tolerations).toEqual([{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }]);
    expect(sts.spec?.template.metadata?.labels).toMatchObject({
      ...members,
      [DATA_PLANE_LABEL]: "true",
      [ROLE_LABEL]: "member",
    });
  });

  it("runs the container with bus port, announce hostname from the pod name, preStop hook, probes, resources, PVC", () => {
    const c = containerOf(sts);
    expect(c.ports).toEqual([
      { name: "valkey", containerPort: 6379, protocol: "TCP" },
      { name: "cluster-bus", containerPort: 16379, protocol: "TCP" },
    ]);
    expect((c.env ?? []).find((e) => e.name === "VALKEY_ANNOUNCE_HOST")?.value).toBe(
      "$(POD_NAME).valkey-cluster-headless.data.svc.cluster.local",
    );
    expect(c.lifecycle?.preStop?.exec?.command).toEqual([
      "sh",
      "/etc/valkey/prestop.sh",
      "/proc/1/fd/2",
      "/data/prestop.log",
    ]);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(30);
    expect(c.resources).toEqual({ requests: { cpu: "1", memory: "12Gi" }, limits: { cpu: "2", memory: "16Gi" } });
    expect(c.readinessProbe?.exec?.command).toEqual(["sh", "/etc/valkey/readiness.sh"]);
    expect(c.livenessProbe?.tcpSocket?.port).toBe(6379);
    expect(sts.spec?.volumeClaimTemplates?.[0]?.spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "gp3-valkey",
      resources: { requests: { storage: "50Gi" } },
    });
    expect(sts.spec?.podManagementPolicy).toBe("Parallel");
    const data = manifest<ConfigMap>(mocks.get("kubernetes:core/v1:ConfigMap", "vc-config")).data ?? {};
    expect(data["valkey.conf"]).toMatch(/^cluster-enabled yes$/m);
    expect(data["valkey.conf"]).toMatch(/^cluster-preferred-endpoint-type hostname$/m);
    expect(data["valkey.conf"]).toMatch(/^io-threads 3$/m);
    expect(data["valkey.conf"]).not.toMatch(/cluster-announce-hostname/);
    expect(data["start.sh"]).toContain("cluster-announce-hostname");
    expect(data["prestop.sh"]).toContain("cluster failover");
  });

  it("announces the pod IP, starts the heal step, probes readiness with the synced check, and sets minReadySeconds", () => {
    const c = containerOf(sts);
    // cluster-announce-ip from the downward API: a restarted member reports its new address.
    expect((c.env ?? []).find((e) => e.name === "VALKEY_ANNOUNCE_IP")).toEqual({
      name: "VALKEY_ANNOUNCE_IP",
      valueFrom: { fieldRef: { fieldPath: "status.podIP" } },
    });
    expect(sts.spec?.minReadySeconds).toBe(10);
    // The probe's timeout covers its three bounded valkey-cli calls.
    expect(c.readinessProbe?.timeoutSeconds).toBeGreaterThanOrEqual(7);
    const data = manifest<ConfigMap>(mocks.get("kubernetes:core/v1:ConfigMap", "vc-config")).data ?? {};
    // heal, rejoin, then failback exec'd, in one background subshell (run for real by
    // cluster-heal-script.test.ts and az-failback-script.test.ts).
    expect(data["start.sh"]).toMatch(
      /^background='\/etc\/valkey\/heal\.sh \/etc\/valkey\/rejoin\.sh \/etc\/valkey\/failback\.sh'$/m,
    );
    // A lost volume (no nodes.conf): the rejoin gate runs before the server starts.
    expect(data["start.sh"]).toMatch(/^rejoin_gate='\/etc\/valkey\/rejoin\.sh'$/m);
    expect(data["start.sh"]).toMatch(/^data_dir='\/data'$/m);
    expect(data["start.sh"]).toContain(
      `if [ -n "$rejoin_gate" ] && [ ! -e "$data_dir/nodes.conf" ]; then sh "$rejoin_gate" gate </dev/null || true; fi`,
    );
    expect(data["rejoin.sh"]).toContain("cluster forget");
    expect(data["failback.sh"]).toContain("cluster failover");
    expect((c.env ?? []).find((e) => e.name === "VALKEY_AVAILABILITY_ZONE")?.valueFrom).toEqual({
      fieldRef: { fieldPath: "metadata.labels['topology.kubernetes.io/zone']" },
    });
    expect(data["start.sh"]?.indexOf("heal.sh")).toBeLessThan(data["start.sh"]?.indexOf("exec valkey-server") ?? -1);
    expect(data["heal.sh"]).toContain("getent hosts");
    expect(data["heal.sh"]).toContain("cluster meet");
    expect(data["readiness.sh"]).toContain("master_link_status:up");
    expect(data["readiness.sh"]).toContain("cluster_state:ok");
  });

  it("publishes not-ready members on the headless Service; NetworkPolicy keeps 16379 between members", () => {
    const headless = svc("vc-headless").spec;
    expect(headless).toMatchObject({ clusterIP: "None", publishNotReadyAddresses: true, selector: members });
    expect(svc("vc-client").spec?.selector).toEqual(members);
    const np = manifest<NetworkPolicy>(mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "vc-netpol")).spec;
    expect(np?.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } }, { podSelector: { matchLabels: members } }],
        ports: [{ protocol: "TCP", port: 6379 }],
      },
      { from: [{ podSelector: { matchLabels: members } }], ports: [{ protocol: "TCP", port: 16379 }] },
    ]);
    expect(
      manifest<PodDisruptionBudget>(mocks.get("kubernetes:policy/v1:PodDisruptionBudget", "vc-pdb")).spec
        ?.maxUnavailable,
    ).toBe(1);
  });

  it("keeps the password out of every manifest", () => {
    for (const r of mocks.resources) expect(JSON.stringify(r.redacted)).not.toContain("s3cr3t");
    expect(JSON.stringify(mocks.get("kubernetes:core/v1:Secret", "vc-secret").inputs)).toContain("s3cr3t");
  });
});

describe("preStop failover against a real local cluster (1 primary + 1 replica)", () => {
  const fleet = new LocalFleet();
  const tree = podTree(undefined);
  afterAll(async () => {
    await fleet.stopAll();
    rmSync(tree.root, { recursive: true, force: true });
  });

  async function preStop(port: number): Promise<string> {
    const path = join(tree.root, "prestop.sh");
    writeFileSync(path, renderPreStopScript({ port, timeoutSeconds: 20 }));
    const env = { ...process.env, VALKEY_CLI: cliPath(), REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD };
    const { stderr } = await run("sh", [path], { env });
    return stderr;
  }

  it("hands the primary's slots to its replica before stopping; a replica just stops", async () => {
    const c = await startLocalCluster(fleet, {
      primaries: 1,
      replicasPerPrimary: 1,
      zones: ["a", "b"],
      password: PASSWORD,
      clusterNodeTimeoutMs: 3000,
    });
    const primary = c.primaries[0];
    const replica = primary ? c.replicasOf.get(primary.address)?.[0] : undefined;
    if (!primary || !replica) throw new Error("cluster has no primary/replica pair");
    expect((await cli(primary.port, ["role"], PASSWORD)).split("\n")[0]).toBe("master");

    const log = await preStop(primary.port);
    expect(log).toContain("failover done");
    expect((await cli(replica.port, ["role"], PASSWORD)).split("\n")[0]).toBe("master");
    expect((await cli(primary.port, ["role"], PASSWORD)).split("\n")[0]).toBe("slave");

    // Now a replica: the hook changes nothing.
    expect(await preStop(primary.port)).toContain("not a primary");
    expect((await cli(replica.port, ["role"], PASSWORD)).split("\n")[0]).toBe("master");
  });
});
