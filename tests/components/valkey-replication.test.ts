import { beforeAll, describe, expect, it } from "vitest";
import { installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL, ROLE_LABEL, ZONE_LABEL, releaseLabels } from "../../components/shared.js";
import { PASSWORD, PLACEMENT, containerOf, manifest, podSpecOf, valkeyConfig } from "../support/valkey-fixtures.js";
import type { ConfigMap, NetworkPolicy, PodDisruptionBudget, Secret, Service, StatefulSet } from "../../components/valkey/k8s-types.js";

const mocks = installMocks();
const { ValkeyReplication } = await import("../../components/valkey-replication.js");

const STS = "kubernetes:apps/v1:StatefulSet";
const SVC = "kubernetes:core/v1:Service";

const sts = (name: string): StatefulSet => manifest<StatefulSet>(mocks.get(STS, name));
const svc = (name: string): Service => manifest<Service>(mocks.get(SVC, name));

describe("ValkeyReplication", () => {
  let comp: InstanceType<typeof ValkeyReplication>;
  beforeAll(async () => {
    comp = new ValkeyReplication("repl", {
      namespace: "valkey",
      valkey: valkeyConfig(),
      placement: PLACEMENT,
      // A plain string: the component itself must make it a secret.
      password: PASSWORD,
    });
    await settle();
  });

  it("creates exactly the expected children, named <name>-<part>, parented to the component", async () => {
    const children = mocks.resources.filter((r) => r.type.startsWith("kubernetes:"));
    const componentUrn = await valueOf(comp.urn);
    for (const c of children) expect({ child: c.name, parent: c.parent, parentUrn: c.parentUrn }).toEqual({ child: c.name, parent: "repl", parentUrn: componentUrn });
    expect(children.map((r) => `${r.type} ${r.name}`).sort()).toEqual(
      [
        "kubernetes:apps/v1:StatefulSet repl-primary",
        "kubernetes:apps/v1:StatefulSet repl-replica",
        "kubernetes:core/v1:ConfigMap repl-config",
        "kubernetes:core/v1:Secret repl-secret",
        "kubernetes:core/v1:Service repl-headless",
        "kubernetes:core/v1:Service repl-primary-svc",
        "kubernetes:core/v1:Service repl-read-svc",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy repl-netpol",
        "kubernetes:policy/v1:PodDisruptionBudget repl-pdb",
      ].sort(),
    );
    expect(mocks.resources.find((r) => r.type === "valkey-on-eks:valkey:Replication")?.name).toBe("repl");
  });

  it("exposes plain outputs from the config", () => {
    expect(comp.release).toBe("valkey");
    expect(comp.primaryHost).toBe("valkey-primary.valkey.svc.cluster.local");
    expect(comp.readHost).toBe("valkey-read.valkey.svc.cluster.local");
    expect(comp.secretName).toBe("valkey-auth");
    expect(comp.passwordKey).toBe("password");
    expect(comp.port).toBe(6379);
    expect(comp.podSelector).toEqual(releaseLabels("valkey"));
    expect(comp.primaryPod).toBe("valkey-primary-0");
    expect(comp.replicaPods).toEqual(["valkey-replica-0", "valkey-replica-1", "valkey-replica-2"]);
    expect(comp.pods).toHaveLength(1 + 3);
    expect(comp.pods[0]).toEqual({ name: "valkey-primary-0", role: "primary", dnsName: "valkey-primary-0.valkey-headless.valkey.svc.cluster.local" });
    expect(comp.pods.filter((p) => p.role === "replica")).toHaveLength(3);
  });

  it("runs 1 primary and N replicas with role labels, data-plane label and release labels", () => {
    const primary = sts("repl-primary");
    const replica = sts("repl-replica");
    expect(primary.spec?.replicas).toBe(1);
    expect(replica.spec?.replicas).toBe(3);
    expect(primary.spec?.serviceName).toBe("valkey-headless");
    for (const [s, role] of [[primary, "primary"], [replica, "replica"]] as const) {
      expect(s.spec?.template.metadata?.labels).toMatchObject({ ...releaseLabels("valkey"), [DATA_PLANE_LABEL]: "true", [ROLE_LABEL]: role });
      expect(s.spec?.selector.matchLabels).toEqual({ ...releaseLabels("valkey"), [ROLE_LABEL]: role });
    }
  });

  it("pins the primary to the first zone and spreads replicas hard over every zone", () => {
    const p = podSpecOf(sts("repl-primary"));
    const r = podSpecOf(sts("repl-replica"));
    const zoneTerm = (s: typeof p): unknown => s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    expect(zoneTerm(p)).toEqual([{ matchExpressions: [{ key: ZONE_LABEL, operator: "In", values: ["us-west-2a"] }] }]);
    expect(zoneTerm(r)).toEqual([{ matchExpressions: [{ key: ZONE_LABEL, operator: "In", values: PLACEMENT.zones }] }]);
    expect(r.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: "DoNotSchedule",
        minDomains: 3,
        labelSelector: { matchLabels: { ...releaseLabels("valkey"), [ROLE_LABEL]: "replica" } },
      },
    ]);
    for (const s of [p, r]) {
      expect(s.affinity?.podAntiAffinity).toEqual({
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: releaseLabels("valkey") } } },
        ],
      });
      expect(s.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
      expect(s.nodeSelector).toEqual(PLACEMENT.nodeSelector);
      expect(s.tolerations).toEqual([{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }]);
      expect(s.securityContext).toMatchObject({ runAsUser: 999, runAsNonRoot: true, fsGroup: 999 });
      expect(s.terminationGracePeriodSeconds).toBeGreaterThan(0);
    }
  });

  it("sets resources, probes, persistence and the password only by reference", () => {
    for (const name of ["repl-primary", "repl-replica"]) {
      const s = sts(name);
      const c = containerOf(s);
      expect(c.resources).toEqual({ requests: { cpu: "1", memory: "12Gi" }, limits: { cpu: "2", memory: "16Gi" } });
      const ready = (c.readinessProbe?.exec?.command ?? []).join(" ");
      expect(ready).toContain("valkey-cli -h 127.0.0.1 -p 6379 ping");
      expect(ready).not.toMatch(/ -a /);
      expect(c.livenessProbe?.tcpSocket).toEqual({ port: 6379 });
      const auth = (c.env ?? []).filter((e) => e.name === "VALKEYCLI_AUTH" || e.name === "REDISCLI_AUTH");
      expect(auth.map((e) => e.valueFrom)).toEqual([
        { secretKeyRef: { name: "valkey-auth", key: "password" } },
        { secretKeyRef: { name: "valkey-auth", key: "password" } },
      ]);
      expect(auth.every((e) => e.value === undefined)).toBe(true);
      expect(c.command?.[2]).toBe(name === "repl-primary" ? "/etc/valkey/valkey-primary.conf" : "/etc/valkey/valkey-replica.conf");
      expect(s.spec?.volumeClaimTemplates).toEqual([
        {
          metadata: { name: "data", labels: releaseLabels("valkey") },
          spec: { accessModes: ["ReadWriteOnce"], storageClassName: "gp3-valkey", resources: { requests: { storage: "50Gi" } } },
        },
      ]);
    }
  });

  it("renders replica config that follows the primary's stable DNS name, and min-replicas-to-write", () => {
    const data = manifest<ConfigMap>(mocks.get("kubernetes:core/v1:ConfigMap", "repl-config")).data ?? {};
    expect(data["valkey-replica.conf"]).toContain("replicaof valkey-primary-0.valkey-headless.valkey.svc.cluster.local 6379");
    expect(data["valkey-primary.conf"]).toContain("min-replicas-to-write 1");
    expect(data["valkey-primary.conf"]).toContain("io-threads 3");
    expect(data["start.sh"]).toContain("replica-announce-ip");
  });

  it("selects the primary for writes and only replicas for reads", () => {
    const sel = (n: string): unknown => svc(n).spec?.selector;
    expect(sel("repl-primary-svc")).toEqual({ ...releaseLabels("valkey"), [ROLE_LABEL]: "primary" });
    expect(sel("repl-read-svc")).toEqual({ ...releaseLabels("valkey"), [ROLE_LABEL]: "replica" });
    expect(svc("repl-primary-svc").metadata?.name).toBe("valkey-primary");
    expect(svc("repl-read-svc").metadata?.name).toBe("valkey-read");
    const headless = svc("repl-headless").spec;
    expect(headless).toMatchObject({ clusterIP: "None", publishNotReadyAddresses: true, selector: releaseLabels("valkey") });
  });

  it("admits 6379 only from client-labelled pods of its namespace and the release's pods; PDB allows one eviction", () => {
    const np = manifest<NetworkPolicy>(mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "repl-netpol")).spec;
    expect(np?.podSelector).toEqual({ matchLabels: releaseLabels("valkey") });
    expect(np?.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(np?.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } }, { podSelector: { matchLabels: releaseLabels("valkey") } }],
        ports: [{ protocol: "TCP", port: 6379 }],
      },
    ]);
    const pdb = manifest<PodDisruptionBudget>(mocks.get("kubernetes:policy/v1:PodDisruptionBudget", "repl-pdb")).spec;
    expect(pdb).toEqual({ maxUnavailable: 1, selector: { matchLabels: releaseLabels("valkey") } });
  });

  it("keeps the password out of every manifest: only the Secret's stringData holds it, as a secret", () => {
    for (const r of mocks.resources) expect(JSON.stringify(r.redacted)).not.toContain("s3cr3t");
    const secret = mocks.get("kubernetes:core/v1:Secret", "repl-secret");
    expect(manifest<Secret>(secret).stringData).toEqual({ password: PASSWORD });
    expect(JSON.stringify(secret.redacted.stringData)).toContain("[secret]");
    expect(JSON.stringify(secret.redacted)).not.toContain(PASSWORD);
  });

  it("refuses a missing password when auth is on, and creates no Secret when auth is off", async () => {
    expect(
      () => new ValkeyReplication("nopw", { namespace: "valkey", valkey: valkeyConfig(), placement: PLACEMENT, password: undefined }),
    ).toThrow(/no password/);
    const open = new ValkeyReplication("open", {
      namespace: "valkey",
      release: "open",
      valkey: valkeyConfig({ auth: { enabled: false } }),
      placement: PLACEMENT,
      password: undefined,
    });
    await settle();
    expect(open.secretName).toBeUndefined();
    expect(mocks.resources.filter((r) => r.name === "open-secret")).toEqual([]);
    expect((containerOf(sts("open-primary")).env ?? []).map((e) => e.name)).toEqual(["POD_NAME", "VALKEY_ANNOUNCE_HOST"]);
  });
});
