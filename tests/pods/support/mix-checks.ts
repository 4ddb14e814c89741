/**
 * The deployed benchmark Job running a mix on real pods (tests/pods/byo-stack.test.ts runs it after
 * the replication lifecycle's live config change, and on cluster mode's second release): `benchmark.mix` get:80,set:20
 * with the reads on the
 * replicas (`benchmark.reads`), in the local `node` image (`benchmark.mixImage`), drills off;
 * cluster mode open loop at a fixed rate (the paced closed loop runs first beside it), replication
 * mode a short soak (`benchmark.soak`, closed loop). One `pulumi up` replaces the Job;
 * its pod runs the bundled mix runner from the ConfigMap through the benchmark's own NetworkPolicy
 * (replication: the HAProxy write Service for the load, every member for INFO commandstats) and
 * the BenchmarkResults step turns its log into the report's rows and `benchmark.mix`. Then:
 *  - the rows are GET, SET, MIX of this mode, measured by the mix runner, rps near the rate;
 *  - the served shares (every member's INFO commandstats, read from inside the pod) are the mix's
 *    within the run's own tolerance, and the replicas served the GETs;
 *  - cluster: the open loop's series covers the duration and the loop comparison has both sides
 *    at the rate; replication: the soak's samples (every member's INFO) made it out of the pod;
 *  - the Job's pod ran the node image on the node without Valkey and succeeded.
 */
import { expect } from "vitest";
import type { ResultRow } from "../../../benchmarks/run/result-row.js";
import type { MixJobExtras } from "../../../benchmarks/run/mix-job-result.js";
import { tail } from "../../e2e/support/pulumi-harness.js";
import type { UpgradeContext } from "./write-load.js";

interface BenchmarkPods {
  items: Array<{
    spec: { nodeName?: string; containers: Array<{ image: string }>; initContainers?: Array<{ image: string }> };
    status: { phase?: string };
  }>;
}

const RATE = 400;
const DURATION_S = 8;
const SAMPLE_S = 2;

export async function expectMixOnRealPods(c: UpgradeContext, clientNode: string): Promise<void> {
  const { api, cluster, NS, mode, stack: s } = c;
  const node = cluster.images.node as string;
  const loadgen = cluster.images.loadgen;
  if (loadgen === undefined)
    throw new Error(
      "no loadgen image in the running local cluster: restart it (npm run kube:local -- down, then up) to import the images",
    );
  const all = await s.stack.getAllConfig();
  const benchmark = JSON.parse(all["valkey-on-eks:benchmark"]?.value ?? "{}") as Record<string, unknown>;
  const drills = JSON.parse(all["valkey-on-eks:drills"]?.value ?? "{}") as Record<string, unknown>;
  await s.stack.setAllConfig({
    "valkey-on-eks:benchmark": {
      value: JSON.stringify({
        ...benchmark,
        enabled: true,
        mix: "get:80,set:20",
        reads: "replicas",
        durationSeconds: DURATION_S,
        clients: 4,
        mixImage: node,
        loadgenImage: loadgen,
        ...(mode === "cluster" ? { rate: RATE } : { soak: { sampleSeconds: SAMPLE_S } }),
      }),
    },
    "valkey-on-eks:drills": { value: JSON.stringify({ ...drills, enabled: false }) },
  });
  const t0 = Date.now();
  const up = await s.stack.up({ onOutput: (o) => s.log.push(o) });
  expect(up.summary.result, tail(s.log)).toBe("succeeded");
  const report = up.outputs.report?.value as { benchmark: { rows: ResultRow[]; mix: MixJobExtras | null } | null };
  const rows = report.benchmark?.rows ?? [];
  const mix = report.benchmark?.mix;
  console.log(
    `[pods] ${mode} mix get:80,set:20 (reads on the replicas) ${mode === "cluster" ? `open loop at ${RATE}/s` : `closed loop, soak sampled every ${SAMPLE_S} s`} for ${DURATION_S} s in the benchmark Job: up ${Math.round((Date.now() - t0) / 1000)} s; ` +
      rows.map((r) => `${r.test} ${Math.round(r.rps)} rps p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms`).join("; ") +
      `; served ${mix?.served.commands.map((x) => `${x.test} ${x.servedPercent.toFixed(2)}%`).join(", ")}`,
  );
  expect(
    rows.map((r) => [r.mode, r.test, r.client_version]),
    tail(s.log),
  ).toEqual(["GET", "SET", "MIX"].map((t) => [mode, t, "vbench mix (vload)"]));
  const total = rows.find((r) => r.test === "MIX");
  const get = mix?.served.commands.find((x) => x.test === "get");
  expect(Math.abs((get?.servedPercent ?? 0) - 80)).toBeLessThanOrEqual(2);
  expect(mix?.latency.p999_ms.MIX).toBeGreaterThan(0);
  // The GETs were served by the replicas (their commandstats, read by the pod itself).
  const members = (
    mix?.served as unknown as { members: { primary: boolean; delta: Record<string, { calls: number }> }[] }
  ).members;
  expect(members.filter((m) => !m.primary).reduce((n, m) => n + (m.delta["get"]?.calls ?? 0), 0)).toBeGreaterThan(0);
  expect(members.filter((m) => m.primary).reduce((n, m) => n + (m.delta["get"]?.calls ?? 0), 0)).toBe(0);
  if (mode === "cluster") {
    expect(total?.requests).toBeGreaterThan(0.8 * RATE * DURATION_S);
    expect(total?.rps).toBeGreaterThan(0.5 * RATE);
    expect(mix?.openLoop?.rate).toBe(RATE);
    expect(mix?.openLoop?.series).toHaveLength(DURATION_S);
    expect([mix?.loops?.rate, (mix?.loops?.closed.rps ?? 0) > 0.5 * RATE]).toEqual([RATE, true]);
    console.log(
      `[pods] cluster loops at ${RATE}/s: closed ${JSON.stringify(mix?.loops?.closed)}; open ${JSON.stringify(mix?.loops?.open)}`,
    );
  } else {
    const soak = mix?.soak;
    expect(soak?.samples.length).toBe(soak?.sampleCount);
    expect(soak?.sampleCount).toBeGreaterThanOrEqual(DURATION_S / SAMPLE_S - 1);
    // Every member's INFO in each sample: 4 members in the replication stack.
    expect(soak?.samples.every((x) => x.members.length === 4 && x.members.every((m) => m.error === null))).toBe(true);
    console.log(
      `[pods] replication soak: ${soak?.sampleCount} samples, events ${JSON.stringify(soak?.events.map((e) => e.kind))}`,
    );
  }
  // The Job's pod: the node image, on the node without Valkey, succeeded.
  const pods = (
    await api<BenchmarkPods>(
      "GET",
      `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=valkey-benchmark")}`,
    )
  ).body.items;
  const ran = pods.filter((p) => p.spec.containers[0]?.image === node);
  expect(ran.map((p) => [p.spec.nodeName, p.status.phase, p.spec.initContainers?.[0]?.image])).toEqual([
    [clientNode, "Succeeded", loadgen],
  ]);
  // The rows are the load generator's: its version is the loadgen image's, its CPU use was measured.
  expect(mix?.generator?.version).toMatch(/^[0-9a-f]{12}$/);
  expect(mix?.generator?.cpu.cpuSeconds).toBeGreaterThan(0);
}
