/**
 * Every stack file (stacks/Pulumi.*.yaml), as written and with the `direct` checks connector:
 * the program is run under Pulumi mocks, its RENDERED NetworkPolicies, Services and pod templates
 * (plus the drill's load Job, which the FailureDrill step creates through the API) are fed to the
 * NetworkPolicy evaluator (components/kubernetes/network-policy-eval.ts), which proves each path
 * the stack needs is allowed and an unlabelled pod of the namespace reaches nothing; and that the
 * metrics (exporters on metrics.port, HAProxy's /metrics on 8404) are reachable from
 * metrics.scrapeFrom only, and from nowhere with metrics off.
 */
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  allowed,
  serviceBackends,
  type External,
  type Pod,
  type Policy,
  type ServiceSpec,
  type World,
} from "../../components/kubernetes/network-policy-eval.js";
import { buildDrillLoadJob } from "../../components/steps/failure-drill/load-job.js";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";

const mocks = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const pulumi = await import("@pulumi/pulumi");
const { runProgram } = await import("../../stacks/program.js");
const { parseStackConfig, rawFromPulumiConfig } = await import("../../config/schema.js");

const dir = mkdtempSync(join(tmpdir(), "vbench-netpol-paths-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
const CHECK_CIDR = "10.20.0.0/16";

type Raw = Record<string, Record<string, unknown> | string | undefined>;
const STACKS = readdirSync("stacks").filter((f) => /^Pulumi\..+\.yaml$/.test(f));
const VARIANTS: Array<{ name: string; patch: (raw: Raw) => Raw }> = [
  { name: "as written", patch: (raw) => raw },
  {
    name: "direct checks",
    patch: (raw) => ({
      ...raw,
      checks: { ...(raw.checks as object), connector: "direct", directSourceCidrs: [CHECK_CIDR] },
    }),
  },
  {
    name: "metrics scraped by a labelled Prometheus",
    patch: (raw) => ({
      ...raw,
      metrics: { scrapeFrom: { namespace: "observability", podLabels: { "app.kubernetes.io/name": "prometheus" } } },
    }),
  },
  { name: "metrics off", patch: (raw) => ({ ...raw, metrics: { enabled: false } }) },
  // AMP's managed collector (platform eks only): its network interfaces sit in the VPC's subnets.
  {
    name: "metrics scraped by AMP's managed collector",
    patch: (raw) => (raw.platform === "byo" ? raw : { ...raw, metrics: { amp: { enabled: true } } }),
  },
];

interface Rendered {
  world: World;
  pods: Pod[];
  services: ServiceSpec[];
  mode: "cluster" | "replication";
  namespace: string;
  metrics: ReturnType<typeof parseStackConfig>["config"]["metrics"];
  vpcCidr: string;
}

type Template = {
  metadata?: { labels?: Record<string, string> };
  spec?: { containers?: Array<{ ports?: Pod["ports"] }> };
};
let ip = 0;
function podsOf(name: string, namespace: string, template: Template | undefined, count: number): Pod[] {
  const ports = (template?.spec?.containers ?? []).flatMap((c) => c.ports ?? []);
  return Array.from({ length: count }, (_, i) => ({
    name: `${name}-${i}`,
    namespace,
    labels: { ...template?.metadata?.labels },
    ports,
    ip: `10.244.0.${++ip}`,
  }));
}

async function render(file: string, patch: (raw: Raw) => Raw): Promise<Rendered> {
  const doc = parseYaml(readFileSync(join("stacks", file), "utf8")) as { config: Record<string, unknown> };
  const raw = rawFromPulumiConfig(doc.config).raw as Raw;
  const patched = patch(raw.platform === "byo" ? { ...raw, byo: { ...(raw.byo as object), kubeconfig } } : raw);
  const { config } = parseStackConfig(patched);
  mocks.reset();
  runProgram({
    stack: file,
    config,
    password: config.valkey.auth.enabled ? pulumi.secret("pw") : undefined,
    usePricingApi: false,
  });
  await settle();
  const ns = config.valkey.namespace;
  const inputs = (type: string): unknown[] => mocks.ofType(type).map((r) => r.inputs);
  const pods: Pod[] = [];
  for (const kind of ["apps/v1:StatefulSet", "apps/v1:Deployment", "batch/v1:Job"]) {
    for (const w of inputs(`kubernetes:${kind}`) as Array<{
      metadata: { name: string };
      spec: { replicas?: number; template: Template };
    }>) {
      pods.push(...podsOf(w.metadata.name, ns, w.spec.template, Math.min(w.spec.replicas ?? 1, 2)));
    }
  }
  // The drill's load Job: created by the FailureDrill step through the Kubernetes API, not by Pulumi.
  const drill = buildDrillLoadJob({
    namespace: ns,
    name: "drill-load",
    runKey: "r",
    mode: config.valkey.mode,
    image: config.drills.image,
    target: { host: "h", port: 6379, sentinel: { host: "s", port: 26379, masterName: "m" } },
    rate: 1,
    loadS: 1,
    keyPrefix: "k",
    secretName: undefined,
    passwordKey: "password",
    placement: { zones: ["a"], nodeSelector: {}, tolerations: [], storageClass: undefined },
    script: "",
  });
  pods.push(...podsOf("drill-load", ns, drill.job.spec.template as Template, 1));
  const policies = inputs("kubernetes:networking.k8s.io/v1:NetworkPolicy") as Policy[];
  const services = inputs("kubernetes:core/v1:Service") as ServiceSpec[];
  return {
    world: {
      policies,
      namespaces: { [ns]: {}, "kube-system": {}, "monitoring": {}, "observability": {}, "elsewhere": {} },
    },
    pods,
    services,
    mode: config.valkey.mode,
    namespace: ns,
    metrics: config.metrics,
    vpcCidr: config.eks.vpcCidr,
  };
}

const named = (r: Rendered, name: string): Pod[] => r.pods.filter((p) => p.labels["app.kubernetes.io/name"] === name);
const service = (r: Rendered, name: string): ServiceSpec => {
  const s = r.services.find((x) => x.metadata.name === name);
  if (s === undefined) throw new Error(`no Service ${name} among ${r.services.map((x) => x.metadata.name).join(", ")}`);
  return s;
};

/** Every (src, dst, port) of a path; each must be allowed. */
function denied(r: Rendered, srcs: Array<Pod | External>, dsts: Pod[], port: number): string[] {
  expect(srcs.length, "sources exist").toBeGreaterThan(0);
  expect(dsts.length, "destinations exist").toBeGreaterThan(0);
  return srcs.flatMap((s) =>
    dsts
      .filter((d) => d !== s && !allowed(r.world, s, d, port))
      .map((d) => `${"name" in s ? s.name : s.ip} → ${d.name}:${port}`),
  );
}

function viaService(r: Rendered, srcs: Pod[], svc: string, port: number): string[] {
  const backends = serviceBackends(service(r, svc), r.pods, port);
  expect(backends.length, `${svc}:${port} has backends`).toBeGreaterThan(0);
  return srcs.flatMap((s) =>
    backends
      .filter((b) => !allowed(r.world, s, b.pod, b.port, b.protocol))
      .map((b) => `${s.name} → ${svc}:${port} (${b.pod.name}:${b.port})`),
  );
}

const DNS_POD: Pod = {
  name: "coredns",
  namespace: "kube-system",
  labels: { "k8s-app": "kube-dns" },
  ports: [{ name: "dns", containerPort: 53, protocol: "UDP" }],
  ip: "10.244.9.9",
};

describe.each(STACKS)("%s: the rendered NetworkPolicies", (file) => {
  describe.each(VARIANTS)("$name", ({ name, patch }) => {
    it("allow every path the stack needs", async () => {
      const r = await render(file, patch);
      const members = named(r, "valkey");
      const bench = named(r, "valkey-benchmark");
      const drill = named(r, "valkey-drill-load");
      const problems: string[] = [];
      if (r.mode === "replication") {
        const sentinels = named(r, "valkey-sentinel");
        const haproxy = named(r, "valkey-haproxy");
        problems.push(...viaService(r, bench, "valkey-write", 6379));
        problems.push(...viaService(r, drill, "valkey-write", 6379), ...viaService(r, drill, "valkey-sentinel", 26379));
        problems.push(...denied(r, members, members, 6379), ...denied(r, members, sentinels, 26379));
        problems.push(...denied(r, sentinels, members, 6379), ...denied(r, sentinels, sentinels, 26379));
        problems.push(...denied(r, haproxy, members, 6379), ...denied(r, haproxy, sentinels, 26379));
        if (name === "direct checks")
          problems.push(
            ...denied(r, [{ ip: "10.20.3.4" }], members, 6379),
            ...denied(r, [{ ip: "10.20.3.4" }], sentinels, 26379),
          );
      } else {
        problems.push(...viaService(r, bench, "valkey-cluster", 6379), ...denied(r, bench, members, 6379));
        problems.push(...viaService(r, drill, "valkey-cluster", 6379), ...denied(r, drill, members, 6379));
        problems.push(...denied(r, members, members, 6379), ...denied(r, members, members, 16379));
        if (name === "direct checks") problems.push(...denied(r, [{ ip: "10.20.3.4" }], members, 6379));
      }
      for (const p of r.pods) if (!allowed(r.world, p, DNS_POD, 53, "UDP")) problems.push(`${p.name} → DNS:53/UDP`);
      expect(problems).toEqual([]);
    });

    it("let an unlabelled pod (or an outside address) reach nothing on 6379/6380/8404/9121/16379/26379", async () => {
      const r = await render(file, patch);
      const stranger: Pod = { name: "stranger", namespace: r.namespace, labels: {}, ip: "10.244.8.8" };
      const targets = r.pods.filter((p) =>
        ["valkey", "valkey-sentinel", "valkey-haproxy"].includes(p.labels["app.kubernetes.io/name"] ?? ""),
      );
      const reached = [stranger, { ip: "192.168.7.7" }].flatMap((s) =>
        targets.flatMap((d) =>
          [6379, 6380, 8404, 9121, 16379, 26379]
            .filter((port) => allowed(r.world, s, d, port))
            .map((port) => `${"name" in s ? s.name : s.ip} → ${d.name}:${port}`),
        ),
      );
      expect(reached).toEqual([]);
    });

    it("admit the metrics scrape from metrics.scrapeFrom only (exporters on metrics.port, HAProxy on 8404)", async () => {
      const r = await render(file, patch);
      const m = r.metrics;
      const exporters = r.pods.filter((p) =>
        ["valkey", "valkey-sentinel"].includes(p.labels["app.kubernetes.io/name"] ?? ""),
      );
      const haproxy = named(r, "valkey-haproxy");
      const scraper: Pod = {
        name: "prometheus",
        namespace: m.scrapeFrom.namespace,
        labels: { ...m.scrapeFrom.podLabels },
        ip: "10.244.7.7",
      };
      // Never admitted: the release's own clients, a pod with the scraper's labels elsewhere, an
      // outside address, and (when scrapeFrom names labels) a pod in the scrape namespace without them.
      const outsiders: Array<Pod | External> = [
        { name: "client", namespace: r.namespace, labels: { "valkey-on-eks/client": "true" }, ip: "10.244.8.1" },
        { name: "elsewhere", namespace: "elsewhere", labels: { ...m.scrapeFrom.podLabels }, ip: "10.244.8.2" },
        { ip: "192.168.7.7" },
        ...(Object.keys(m.scrapeFrom.podLabels).length > 0
          ? [{ name: "unlabelled", namespace: m.scrapeFrom.namespace, labels: {}, ip: "10.244.8.3" }]
          : []),
      ];
      const reach = (srcs: Array<Pod | External>, dsts: Pod[], port: number): string[] =>
        srcs.flatMap((s) =>
          dsts
            .filter((d) => allowed(r.world, s, d, port))
            .map((d) => `${"name" in s ? s.name : s.ip} → ${d.name}:${port}`),
        );
      expect(exporters.length).toBeGreaterThan(0);
      expect(reach(outsiders, exporters, m.port)).toEqual([]);
      expect(reach(outsiders, haproxy, 8404)).toEqual([]);
      if (m.enabled) {
        // With AMP, an address of the VPC (the collector's interface, not a pod here) scrapes too.
        const collectors: External[] = m.scrapeFrom.cidrs.map((cidr) => ({ ip: cidr.replace(/\.0\/\d+$/, ".77") }));
        expect(m.scrapeFrom.cidrs).toEqual(m.amp.enabled ? [r.vpcCidr] : []);
        expect(denied(r, [scraper, ...collectors], exporters, m.port)).toEqual([]);
        if (r.mode === "replication") expect(denied(r, [scraper, ...collectors], haproxy, 8404)).toEqual([]);
        // The scrape rule opens the metrics ports only, not Valkey's.
        expect(reach([scraper, ...collectors], exporters, 6379)).toEqual([]);
        expect(reach([scraper, ...collectors], exporters, 16379)).toEqual([]);
      } else {
        expect(reach([scraper], [...exporters, ...haproxy], m.port)).toEqual([]);
        expect(reach([scraper], haproxy, 8404)).toEqual([]);
      }
    });
  });
});
