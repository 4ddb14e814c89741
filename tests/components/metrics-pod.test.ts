/**
 * `metrics` in the rendered pods (components/valkey/metrics-pod.ts): an exporter container beside
 * every member and Sentinel running pod/exporter.ts's arguments against its own server's port, its
 * image and port from the config, the password only as a Secret reference in its environment (never
 * argv, never a literal), the scrape annotations on member, Sentinel and HAProxy pods; none of it with
 * metrics off. The NetworkPolicy side is tests/components/network-policy-paths.test.ts's; the
 * exporters answering on real pods, tests/pods/byo-stack.test.ts's (support/metrics-checks.ts).
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import type { MetricsConfig } from "../../config/types.js";
import { buildClusterManifests } from "../../components/valkey/cluster-manifests.js";
import type { Container, StatefulSet } from "../../components/valkey/k8s-types.js";
import { EXPORTER_CONTAINER, EXPORTER_RESOURCES } from "../../components/valkey/metrics-pod.js";
import { METRICS_COMPONENT_ANNOTATION } from "../../core/metrics/targets.js";
import { exporterDefinition } from "../../pod/exporter.js";
import { versions } from "../../versions.js";
import { PLACEMENT, replicationFixture, valkeyConfig } from "../support/valkey-fixtures.js";

const metricsOf = (metrics: Record<string, unknown> = {}): MetricsConfig =>
  parseStackConfig({ metrics }).config.metrics;

const containers = (sts: StatefulSet): Container[] => sts.spec?.template?.spec?.containers ?? [];
const annotations = (sts: { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }) =>
  sts.spec?.template?.metadata?.annotations ?? {};

const replication = (metrics: MetricsConfig | undefined, auth = true) =>
  replicationFixture({ auth, ...(metrics === undefined ? {} : { metrics }) });

describe("the metrics exporter in the rendered pods", () => {
  it("defaults: on, redis_exporter from EXPORTER_IMAGE on 9121, scraped from the monitoring namespace", () => {
    const m = metricsOf();
    expect([m.enabled, m.exporterImage, m.port, m.scrapeFrom]).toEqual([
      true,
      versions.EXPORTER_IMAGE,
      9121,
      { namespace: "monitoring", podLabels: {}, cidrs: [] },
    ]);
  });

  it("replication: beside each member (6379) and each Sentinel (26379), password from the Secret only", () => {
    const metrics = metricsOf({ exporterImage: "registry.example.com/mirror/redis_exporter:v1.45.0", port: 9500 });
    const r = replication(metrics);
    for (const [sts, serverPort, component] of [
      [r.statefulSet, 6379, "valkey"],
      [r.sentinel.statefulSet, 26379, "sentinel"],
    ] as const) {
      const [server, exporter, ...rest] = containers(sts);
      expect(rest).toEqual([]);
      expect(server?.name).not.toBe(EXPORTER_CONTAINER);
      expect(exporter?.name).toBe(EXPORTER_CONTAINER);
      expect(exporter?.image).toBe("registry.example.com/mirror/redis_exporter:v1.45.0");
      expect(exporter?.command).toBeUndefined();
      expect(exporter?.args).toEqual(
        exporterDefinition({
          server: { host: "127.0.0.1", port: serverPort },
          listen: { host: "", port: 9500 },
          auth: true,
        }).args,
      );
      expect(exporter?.args).toEqual([
        "--redis.addr",
        `redis://127.0.0.1:${serverPort}`,
        "--web.listen-address",
        ":9500",
        "--web.telemetry-path",
        "/metrics",
      ]);
      expect(exporter?.env).toEqual([
        { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: r.facts.secretName, key: "password" } } },
      ]);
      expect(exporter?.ports).toEqual([{ name: "metrics", containerPort: 9500, protocol: "TCP" }]);
      expect(exporter?.resources).toEqual(EXPORTER_RESOURCES);
      // No readiness probe: an exporter that cannot start must not take the server out of its Services.
      expect(exporter?.readinessProbe).toBeUndefined();
      expect(exporter?.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect(annotations(sts)).toMatchObject({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9500",
        "prometheus.io/path": "/metrics",
        [METRICS_COMPONENT_ANNOTATION]: component,
      });
    }
    // HAProxy serves its own /metrics on the status port: annotated, no extra container.
    expect(annotations(r.haproxy.deployment)).toMatchObject({
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "8404",
      "prometheus.io/path": "/metrics",
      [METRICS_COMPONENT_ANNOTATION]: "haproxy",
    });
    expect(r.haproxy.deployment.spec?.template?.spec?.containers).toHaveLength(1);
  });

  it("auth off: the exporter reads no password at all", () => {
    const r = replication(metricsOf(), false);
    expect(containers(r.statefulSet)[1]?.env).toEqual([]);
    expect(containers(r.sentinel.statefulSet)[1]?.env).toEqual([]);
  });

  it("cluster: beside each member, annotated as valkey", () => {
    const c = buildClusterManifests({
      namespace: "ns",
      release: "vc",
      valkey: valkeyConfig({ mode: "cluster" }),
      placement: PLACEMENT,
      auth: true,
      metrics: metricsOf(),
    });
    expect(containers(c.statefulSet).map((x) => x.name)).toEqual(["valkey", EXPORTER_CONTAINER]);
    expect(containers(c.statefulSet)[1]?.args?.[1]).toBe("redis://127.0.0.1:6379");
    expect(annotations(c.statefulSet)[METRICS_COMPONENT_ANNOTATION]).toBe("valkey");
  });

  it("metrics off (or not given to the builder): one container per pod, no scrape annotation", () => {
    for (const r of [replication(metricsOf({ enabled: false })), replication(undefined)]) {
      expect(containers(r.statefulSet)).toHaveLength(1);
      expect(containers(r.sentinel.statefulSet)).toHaveLength(1);
      for (const a of [
        annotations(r.statefulSet),
        annotations(r.sentinel.statefulSet),
        annotations(r.haproxy.deployment),
      ])
        expect(
          Object.keys(a).filter((k) => k.startsWith("prometheus.io/") || k === METRICS_COMPONENT_ANNOTATION),
        ).toEqual([]);
    }
  });

  it("config: a port the pods use, a bad namespace or label is refused, naming the key", () => {
    const problems = (metrics: Record<string, unknown>): string => {
      try {
        parseStackConfig({ metrics });
        return "";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(problems({ port: 6379 })).toMatch(/metrics\.port: must not be a port the Valkey pods already use/);
    expect(problems({ port: 26379 })).toMatch(/metrics\.port/);
    expect(problems({ scrapeFrom: { namespace: "Monitoring" } })).toMatch(/metrics\.scrapeFrom\.namespace/);
    expect(problems({ scrapeFrom: { podLabels: { "bad key!": "x" } } })).toMatch(/metrics\.scrapeFrom\.podLabels/);
    expect(problems({ exporterImage: "not an image::" })).toMatch(/metrics\.exporterImage/);
    expect(problems({ scrape: true })).toMatch(/metrics/);
  });
});
