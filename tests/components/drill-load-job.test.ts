/**
 * The drill load's Job contract (components/steps/failure-drill/load-job.ts): what the e2e
 * stand-in and the NetworkPolicy rely on, field by field.
 */
import { describe, expect, it } from "vitest";
import {
  buildDrillLoadJob,
  DRILL_LOAD_CONTAINER,
  type DrillLoadJobArgs,
} from "../../components/steps/failure-drill/load-job.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL } from "../../components/shared.js";
import { buildNetworkPolicy } from "../../components/valkey/network-policy.js";

const args: DrillLoadJobArgs = {
  namespace: "valkey",
  name: "valkey-drill-primary-a1b2c3",
  runKey: "a1b2c3",
  mode: "replication",
  image: "public.ecr.aws/docker/library/node:24.9.0-alpine",
  target: {
    host: "valkey-write.valkey.svc.cluster.local",
    port: 6379,
    sentinel: { host: "valkey-sentinel.valkey.svc.cluster.local", port: 26379, masterName: "valkey" },
  },
  rate: 50,
  loadS: 90,
  keyPrefix: "drill:a1b2c3:primary",
  secretName: "valkey-auth",
  passwordKey: "password",
  placement: {
    zones: ["z-a", "z-b"],
    nodeSelector: { "karpenter.sh/nodepool": "valkey" },
    tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
    storageClass: undefined,
  },
  script: "console.log('load')",
};

describe("the drill load Job contract", () => {
  const { configMap, job } = buildDrillLoadJob(args);
  const pod = job.spec.template;
  const container = pod.spec.containers[0]!;

  it("labels the pod drill-load and client (what the NetworkPolicy admits), with the run key", () => {
    expect(pod.metadata.labels).toMatchObject({
      "valkey-on-eks/drill-load": "true",
      [CLIENT_LABEL]: "true",
      "valkey-on-eks/drill-run": "a1b2c3",
      "app.kubernetes.io/part-of": "valkey-on-eks",
    });
    // The release's own policy admits exactly this label as a client.
    const policy = buildNetworkPolicy({
      name: "np",
      namespace: "valkey",
      release: "valkey",
      podSelector: { app: "valkey" },
    });
    const from = JSON.stringify(policy.spec.ingress);
    expect(from).toContain(JSON.stringify({ podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } }));
  });

  it("runs one container drill-load: node /drill/load.mjs from the ConfigMap mounted at /drill", () => {
    expect(pod.spec.containers).toHaveLength(1);
    expect(container.name).toBe(DRILL_LOAD_CONTAINER);
    expect(container.command).toEqual(["node", "/drill/load.mjs"]);
    expect(container).not.toHaveProperty("args");
    expect(container.volumeMounts).toEqual([{ name: "drill", mountPath: "/drill", readOnly: true }]);
    expect(pod.spec.volumes).toEqual([{ name: "drill", configMap: { name: args.name } }]);
    expect(configMap.metadata.name).toBe(args.name);
    expect(configMap.data).toEqual({ "load.mjs": args.script });
  });

  it("passes every setting as env, the password only through secretKeyRef", () => {
    expect(container.env).toEqual([
      { name: "DRILL_MODE", value: "replication" },
      { name: "DRILL_TARGET_HOST", value: "valkey-write.valkey.svc.cluster.local" },
      { name: "DRILL_TARGET_PORT", value: "6379" },
      { name: "DRILL_SENTINEL_HOST", value: "valkey-sentinel.valkey.svc.cluster.local" },
      { name: "DRILL_SENTINEL_PORT", value: "26379" },
      { name: "DRILL_MASTER_NAME", value: "valkey" },
      { name: "DRILL_RATE", value: "50" },
      { name: "DRILL_LOAD_S", value: "90" },
      { name: "DRILL_KEY_PREFIX", value: "drill:a1b2c3:primary" },
      { name: "DRILL_WAIT_TIMEOUT_MS", value: "500" },
      { name: "DRILL_COMMAND_TIMEOUT_MS", value: "1000" },
      { name: "NODE_NO_WARNINGS", value: "1" },
      { name: "VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "valkey-auth", key: "password" } } },
    ]);
    const cluster = buildDrillLoadJob({
      ...args,
      mode: "cluster",
      target: { host: "valkey-cluster.valkey.svc.cluster.local", port: 6379 },
      secretName: undefined,
    });
    const env = cluster.job.spec.template.spec.containers[0]!.env.map((e) => e.name);
    expect(env).not.toContain("DRILL_SENTINEL_HOST");
    expect(env).not.toContain("VALKEY_PASSWORD");
  });

  it("never retries, and runs where the benchmark pod runs: the Valkey pool, never on a Valkey node", () => {
    expect(pod.spec.restartPolicy).toBe("Never");
    expect(job.spec.backoffLimit).toBe(0);
    expect(pod.spec.nodeSelector).toEqual({ "karpenter.sh/nodepool": "valkey" });
    expect(pod.spec.tolerations).toEqual([
      { key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" },
    ]);
    expect(pod.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
      { labelSelector: { matchLabels: { [DATA_PLANE_LABEL]: "true" } }, topologyKey: "kubernetes.io/hostname" },
    ]);
  });

  it("refuses a name that is not a DNS label, and replication without the Sentinel", () => {
    expect(() => buildDrillLoadJob({ ...args, name: "Valkey_Drill" })).toThrow(
      'drill load Job name "Valkey_Drill" is not a DNS-1123 label',
    );
    expect(() => buildDrillLoadJob({ ...args, target: { host: "w", port: 6379 } })).toThrow(
      "replication mode needs target.sentinel",
    );
  });
});
