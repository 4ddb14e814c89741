import { beforeAll, describe, expect, it } from "vitest";
import { installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL, ROLE_LABEL, releaseLabels } from "../../components/shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { PASSWORD, PLACEMENT, containerOf, manifest, podSpecOf, valkeyConfig } from "../support/valkey-fixtures.js";
import type {
  ConfigMap,
  NetworkPolicy,
  PodDisruptionBudget,
  Secret,
  Service,
  StatefulSet,
} from "../../components/valkey/k8s-types.js";
import type { Deployment } from "../../components/valkey/haproxy-manifests.js";
import { authCommandHex } from "../../pod/haproxy-cfg.js";
import { READINESS_PERIOD_SECONDS } from "../../components/valkey/statefulset.js";

const mocks = installMocks();
const { ValkeyReplication } = await import("../../components/valkey-replication.js");

const STS = "kubernetes:apps/v1:StatefulSet";
const SVC = "kubernetes:core/v1:Service";
const PDB = "kubernetes:policy/v1:PodDisruptionBudget";
const NP = "kubernetes:networking.k8s.io/v1:NetworkPolicy";

const sts = (name: string): StatefulSet => manifest<StatefulSet>(mocks.get(STS, name));
const svc = (name: string): Service => manifest<Service>(mocks.get(SVC, name));
const members = releaseLabels("valkey");
const sentinels = {
  ...releaseLabels("valkey"),
  "app.kubernetes.io/name": "valkey-sentinel",
  "app.kubernetes.io/component": "sentinel",
};
const proxies = {
  ...releaseLabels("valkey"),
  "app.kubernetes.io/name": "valkey-haproxy",
  "app.kubernetes.io/component": "haproxy",
};
const SENTINEL_DNS = [0, 1, 2].map(
  (i) => `valkey-sentinel-${i}.valkey-sentinel-headless.valkey.svc.cluster.local:26379`,
);

describe("ValkeyReplication under Sentinel (mocks)", () => {
  let comp: InstanceType<typeof ValkeyReplication>;
  let data: Record<string, string>;
  beforeAll(async () => {
    comp = new ValkeyReplication("repl", {
      namespace: "valkey",
      valkey: valkeyConfig(),
      placement: PLACEMENT,
      password: PASSWORD,
    });
    await settle();
    data = manifest<ConfigMap>(mocks.get("kubernetes:core/v1:ConfigMap", "repl-config")).data ?? {};
  });

  it("creates exactly these children, parented to the component, and no RBAC object", async () => {
    const children = mocks.resources.filter((r) => r.type.startsWith("kubernetes:"));
    const urn = await valueOf(comp.urn);
    for (const c of children)
      expect({ child: c.name, parentUrn: c.parentUrn }).toEqual({ child: c.name, parentUrn: urn });
    expect(children.map((r) => `${r.type} ${r.name}`).sort()).toEqual(
      [
        "kubernetes:apps/v1:Deployment repl-haproxy",
        "kubernetes:apps/v1:StatefulSet repl-members",
        "kubernetes:apps/v1:StatefulSet repl-sentinel",
        "kubernetes:core/v1:ConfigMap repl-config",
        "kubernetes:core/v1:Secret repl-haproxy-cfg",
        "kubernetes:core/v1:Secret repl-secret",
        "kubernetes:core/v1:Service repl-headless",
        "kubernetes:core/v1:Service repl-read-svc",
        "kubernetes:core/v1:Service repl-sentinel-headless",
        "kubernetes:core/v1:Service repl-sentinel-svc",
        "kubernetes:core/v1:Service repl-write-svc",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy repl-haproxy-netpol",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy repl-netpol",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy repl-sentinel-netpol",
        "kubernetes:policy/v1:PodDisruptionBudget repl-haproxy-pdb",
        "kubernetes:policy/v1:PodDisruptionBudget repl-pdb",
        "kubernetes:policy/v1:PodDisruptionBudget repl-sentinel-pdb",
      ].sort(),
    );
    expect(children.some((r) => r.type.includes("rbac.authorization"))).toBe(false);
  });

  it("exposes the write, read and Sentinel endpoints, the master name and every pod", () => {
    expect(comp.writeHost).toBe("valkey-write.valkey.svc.cluster.local");
    expect(comp.readHost).toBe("valkey-read.valkey.svc.cluster.local");
    expect(comp.sentinelHost).toBe("valkey-sentinel.valkey.svc.cluster.local");
    expect(comp.sentinelPort).toBe(26379);
    expect(comp.masterName).toBe("valkey-primary");
    expect(comp.pods.map((p) => p.name)).toEqual(["valkey-0", "valkey-1", "valkey-2", "valkey-3"]);
    expect(comp.pods[0]?.dnsName).toBe("valkey-0.valkey-headless.valkey.svc.cluster.local");
    expect(comp.sentinels.map((p) => `${p.dnsName}:26379`)).toEqual(SENTINEL_DNS);
    expect(comp.podSelector).toEqual(members);
    expect(comp.sentinelSelector).toEqual(sentinels);
  });

  it("runs ONE StatefulSet of 1 + N equal members, spread hard over every zone, none pinned", () => {
    const s = sts("repl-members");
    expect(s.metadata?.name).toBe("valkey");
    expect(s.spec?.replicas).toBe(4);
    expect(s.spec?.template.metadata?.labels).toEqual({
      ...members,
      [ROLE_LABEL]: "member",
      [DATA_PLANE_LABEL]: "true",
    });
    const p = podSpecOf(s);
    expect(p.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: ZONE_LABEL, operator: "In", values: PLACEMENT.zones }] },
    ]);
    expect(p.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: "DoNotSchedule",
        minDomains: 3,
        labelSelector: { matchLabels: { ...members, [ROLE_LABEL]: "member" } },
      },
    ]);
    expect(
      mocks.resources
        .filter((r) => r.type === STS)
        .map((r) => r.name)
        .sort(),
    ).toEqual(["repl-members", "repl-sentinel"]);
  });

  it("members: the Sentinel start decision, valkey.conf including replication.conf, min-replicas on every member", () => {
    const c = containerOf(sts("repl-members"));
    expect(c.command).toEqual(["sh", "/etc/valkey/start.sh", "/etc/valkey/valkey.conf"]);
    expect(data["valkey.conf"]).toContain('include "/run/valkey/replication.conf"');
    expect(data["valkey.conf"]).toContain("min-replicas-to-write 1");
    expect(data["valkey.conf"]).toContain("min-replicas-max-lag 7");
    expect(data["valkey.conf"]).not.toMatch(/^replicaof /m);
    expect(data["start.sh"]).toContain("SENTINEL GET-MASTER-ADDR-BY-NAME");
    expect(data["start.sh"]).toContain(SENTINEL_DNS.join(" "));
    expect(data["start.sh"]).toContain("master_name='valkey-primary'");
  });

  it("members: ready only with the link to the primary up, probed every 2 s with about 15 s of failures tolerated; preStop asks a Sentinel for SENTINEL FAILOVER, bounded", () => {
    const c = containerOf(sts("repl-members"));
    expect(c.readinessProbe?.exec?.command).toEqual(["sh", "/etc/valkey/readiness.sh"]);
    // A restarted member is Ready within a probe period of its first sync (a drill's recovery and a roll step wait for it).
    expect(c.readinessProbe?.periodSeconds).toBe(READINESS_PERIOD_SECONDS);
    expect(READINESS_PERIOD_SECONDS).toBeLessThanOrEqual(2);
    expect(c.readinessProbe?.initialDelaySeconds).toBeLessThanOrEqual(READINESS_PERIOD_SECONDS);
    const tolerated = (c.readinessProbe?.failureThreshold ?? 0) * READINESS_PERIOD_SECONDS;
    expect(tolerated).toBeGreaterThanOrEqual(15);
    expect(data["readiness.sh"]).toContain("master_link_status:up");
    expect(c.lifecycle?.preStop?.exec?.command).toEqual([
      "sh",
      "/etc/valkey/prestop.sh",
      "/proc/1/fd/2",
      "/data/prestop.log",
    ]);
    const pre = data["prestop.sh"] ?? "";
    expect(pre).toContain("SENTINEL FAILOVER");
    expect(pre).toContain('CLIENT PAUSE "$pause_ms" WRITE');
    expect(pre).toContain("CLIENT UNPAUSE");
    expect(pre).toContain('cli() { cli_within "$cli_timeout" "$@"; }');
    expect(pre).toContain('timeout "$w_bound"');
    expect(pre).toContain("timeout_s=30");
    expect(podSpecOf(sts("repl-members")).terminationGracePeriodSeconds).toBe(90);
  });

  it("Sentinels: 3, one per zone (required zone anti-affinity + hard spread), a PVC for their state, stable DNS names", () => {
    const s = sts("repl-sentinel");
    expect(s.spec?.replicas).toBe(3);
    expect(s.spec?.serviceName).toBe("valkey-sentinel-headless");
    expect(s.spec?.selector.matchLabels).toEqual(sentinels);
    const p = podSpecOf(s);
    expect(p.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
      { topologyKey: ZONE_LABEL, labelSelector: { matchLabels: sentinels } },
    ]);
    expect(p.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: "DoNotSchedule",
        minDomains: 3,
        labelSelector: { matchLabels: sentinels },
      },
    ]);
    expect(p.tolerations).toEqual([{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }]);
    expect(s.spec?.volumeClaimTemplates?.[0]?.spec).toMatchObject({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "gp3-valkey",
      resources: { requests: { storage: "1Gi" } },
    });
    const c = containerOf(s);
    expect(c.command).toEqual(["sh", "/etc/valkey/sentinel-start.sh"]);
    expect(c.volumeMounts).toContainEqual({ name: "data", mountPath: "/data" });
    expect(c.env).toContainEqual({
      name: "VALKEY_ANNOUNCE_HOST",
      value: "$(POD_NAME).valkey-sentinel-headless.valkey.svc.cluster.local",
    });
    const headless = svc("repl-sentinel-headless").spec;
    expect(headless).toMatchObject({
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: sentinels,
      ports: [{ port: 26379 }],
    });
    expect(svc("repl-sentinel-svc").spec).toMatchObject({
      type: "ClusterIP",
      selector: sentinels,
      ports: [{ port: 26379, targetPort: "sentinel" }],
    });
  });

  it("Sentinel config: hostnames, auth from the Secret file under umask 077, the configured quorum and timings", () => {
    const conf = data["sentinel.conf"] ?? "";
    const lines = [
      "sentinel resolve-hostnames yes",
      "sentinel announce-hostnames yes",
      "sentinel monitor valkey-primary valkey-0.valkey-headless.valkey.svc.cluster.local 6379 2",
      "sentinel down-after-milliseconds valkey-primary 4000",
      "sentinel failover-timeout valkey-primary 45000",
      "sentinel parallel-syncs valkey-primary 2",
      'dir "/data"',
    ];
    for (const line of lines) expect(conf).toContain(line);
    const start = data["sentinel-start.sh"] ?? "";
    expect(start.indexOf("umask 077")).toBeGreaterThan(0);
    expect(start.indexOf("umask 077")).toBeLessThan(start.indexOf("mkdir"));
    expect(start).toMatch(/^password_file='\/etc\/valkey-secret\/password'$/m);
    expect(start).toContain("requirepass %s\\nsentinel sentinel-pass %s\\nsentinel auth-pass %s %s");
    expect(start).toContain("sentinel announce-ip");
    expect(start).toContain('exec valkey-server "$state" --sentinel');
  });

  it("HAProxy: 2 replicas over the zones, haproxy.cfg from a Secret holding the password as a Pulumi secret", () => {
    const d = manifest<Deployment>(mocks.get("kubernetes:apps/v1:Deployment", "repl-haproxy"));
    expect(d.spec?.replicas).toBe(2);
    const p = d.spec?.template.spec;
    expect(p?.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: "DoNotSchedule",
        minDomains: 3,
        labelSelector: { matchLabels: proxies },
      },
    ]);
    expect(p?.automountServiceAccountToken).toBe(false);
    // The image is config valkey.replication.haproxyImage (a mirror here), not a constant.
    expect(p?.containers.map((c) => c.image)).toEqual(["registry.example.com/mirror/haproxy:3.2.4"]);
    expect(p?.volumes).toEqual([{ name: "cfg", secret: { secretName: "valkey-haproxy", defaultMode: 0o440 } }]);
    const cfgSecret = mocks.get("kubernetes:core/v1:Secret", "repl-haproxy-cfg");
    const cfg = manifest<Secret>(cfgSecret).stringData?.["haproxy.cfg"] ?? "";
    expect(cfg).toContain(authCommandHex(PASSWORD));
    expect(cfg).toContain("parse-resolv-conf");
    for (const m of comp.pods) expect(cfg).toContain(`server ${m.name} ${m.dnsName}:6379 check`);
    expect(JSON.stringify(cfgSecret.redacted)).not.toContain(authCommandHex(PASSWORD));
    expect(JSON.stringify(cfgSecret.redacted.stringData)).toContain("[secret]");
  });

  it("the write Service reaches HAProxy's write frontend, the read Service its replicas-only frontend", () => {
    expect(svc("repl-write-svc").metadata?.name).toBe("valkey-write");
    expect(svc("repl-write-svc").spec).toMatchObject({
      selector: proxies,
      ports: [{ port: 6379, targetPort: "write" }],
    });
    expect(svc("repl-read-svc").spec).toMatchObject({ selector: proxies, ports: [{ port: 6379, targetPort: "read" }] });
  });

  it("a PodDisruptionBudget each for members, Sentinels and HAProxy", () => {
    const pdb = (n: string): unknown => manifest<PodDisruptionBudget>(mocks.get(PDB, n)).spec;
    expect(pdb("repl-pdb")).toEqual({ maxUnavailable: 1, selector: { matchLabels: members } });
    expect(pdb("repl-sentinel-pdb")).toEqual({ maxUnavailable: 1, selector: { matchLabels: sentinels } });
    expect(pdb("repl-haproxy-pdb")).toEqual({ minAvailable: 1, selector: { matchLabels: proxies } });
  });

  it("NetworkPolicies: Sentinels and HAProxy reach members on 6379, members, HAProxy and clients reach Sentinels, clients reach HAProxy; clients in the namespace only; egress limited", () => {
    const np = (n: string): NetworkPolicy["spec"] => manifest<NetworkPolicy>(mocks.get(NP, n)).spec;
    // A podSelector alone: labelled clients in the release's own namespace, no other namespace.
    const clients = { podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } };
    const pods = (l: Record<string, string>): unknown => ({ podSelector: { matchLabels: l } });
    const dns = {
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    };
    const toMembers = { to: [pods(members)], ports: [{ protocol: "TCP", port: 6379 }] };
    const toSentinels = { to: [pods(sentinels)], ports: [{ protocol: "TCP", port: 26379 }] };
    expect(np("repl-netpol")).toEqual({
      podSelector: { matchLabels: members },
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        { from: [clients, pods(members), pods(sentinels), pods(proxies)], ports: [{ protocol: "TCP", port: 6379 }] },
      ],
      egress: [dns, toMembers, toSentinels],
    });
    expect(np("repl-sentinel-netpol")?.ingress).toEqual([
      { from: [clients, pods(members), pods(sentinels), pods(proxies)], ports: [{ protocol: "TCP", port: 26379 }] },
    ]);
    expect(np("repl-sentinel-netpol")?.egress).toEqual([dns, toMembers, toSentinels]);
    expect(np("repl-haproxy-netpol")?.ingress).toEqual([
      {
        from: [clients],
        ports: [
          { protocol: "TCP", port: 6379 },
          { protocol: "TCP", port: 6380 },
        ],
      },
    ]);
    expect(np("repl-haproxy-netpol")?.egress).toEqual([dns, toMembers, toSentinels]);
  });

  it("keeps the password out of every plain input and rendered manifest; only Secrets hold it, as secrets", () => {
    for (const r of mocks.resources) {
      expect(JSON.stringify(r.redacted)).not.toContain("s3cr3t");
      expect(JSON.stringify(r.redacted)).not.toContain(authCommandHex(PASSWORD));
    }
    for (const r of mocks.resources.filter((x) => x.type !== "kubernetes:core/v1:Secret"))
      expect(JSON.stringify(r.inputs)).not.toContain("s3cr3t");
    for (const name of ["repl-members", "repl-sentinel"]) {
      const c = containerOf(sts(name));
      expect((c.command ?? []).join(" ")).not.toContain("s3cr3t");
      const auth = (c.env ?? []).filter((e) => e.name === "VALKEYCLI_AUTH" || e.name === "REDISCLI_AUTH");
      expect(auth.map((e) => e.valueFrom)).toEqual([
        { secretKeyRef: { name: "valkey-auth", key: "password" } },
        { secretKeyRef: { name: "valkey-auth", key: "password" } },
      ]);
    }
  });

  it("without auth: no password Secret, no auth lines, HAProxy checks without AUTH", async () => {
    new ValkeyReplication("open", {
      namespace: "valkey",
      release: "open",
      valkey: valkeyConfig({ auth: { enabled: false } }),
      placement: PLACEMENT,
      password: undefined,
    });
    await settle();
    expect(mocks.resources.filter((r) => r.name === "open-secret")).toEqual([]);
    const start =
      manifest<ConfigMap>(mocks.get("kubernetes:core/v1:ConfigMap", "open-config")).data?.["sentinel-start.sh"] ?? "";
    // The auth lines run only with a password file, and there is none.
    expect(start).toMatch(/^password_file=''$/m);
    expect(start).toContain('if [ -n "$password_file" ]; then');
    const cfg =
      manifest<Secret>(mocks.get("kubernetes:core/v1:Secret", "open-haproxy-cfg")).stringData?.["haproxy.cfg"] ?? "";
    expect(cfg).not.toContain(authCommandHex("x").slice(0, 20));
    expect(cfg).toContain("tcp-check expect string role:master");
  });
});
