/**
 * The deployed benchmark Job running a mix on real pods (tests/pods/byo-stack.test.ts runs it after
 * the live config change of each mode): `benchmark.mix` get:80,set:20, open loop at a fixed rate,
 * in the local `node` image (`benchmark.mixImage`), drills off. One `pulumi up` replaces the Job;
 * its pod runs the bundled mix runner from the ConfigMap through the benchmark's own NetworkPolicy
 * (replication: the HAProxy write Service for the load, every member for INFO commandstats) and
 * the BenchmarkResults step turns its log into the report's rows and `benchmark.mix`. Then:
 *  - the rows are GET, SET, MIX of this mode, measured by the mix runner, rps near the rate;
 *  - the served shares (every member's INFO commandstats, read from inside the pod) are the mix's
 *    within the run's own tolerance, and the open loop's series covers the duration;
 *  - the Job's pod ran the node image on the node without Valkey and succeeded.
 */
import { expect } from "vitest";
import type { ResultRow } from "../../../benchmarks/run/result-row.js";
import type { MixJobExtras } from "../../../benchmarks/run/mix-job-result.js";
import { tail } from "../../e2e/support/pulumi-harness.js";
import type { UpgradeContext } from "./write-load.js";

interface BenchmarkPods {
  items: Array<{ spec: { nodeName?: string; containers: Array<{ image: string }> }; status: { phase?: string } }>;
}

const RATE = 400;
const DURATION_S = 8;

export async function expectMixOnRealPods(c: UpgradeContext, clientNode: string): Promise<void> {
  const { api, cluster, NS, mode, stack: s } = c;
  const node = cluster.images.node as string;
  const all = await s.stack.getAllConfig();
  const benchmark = JSON.parse(all["valkey-on-eks:benchmark"]?.value ?? "{}") as Record<string, unknown>;
  const drills = JSON.parse(all["valkey-on-eks:drills"]?.value ?? "{}") as Record<string, unknown>;
  await s.stack.setAllConfig({
    "valkey-on-eks:benchmark": {
      value: JSON.stringify({ ...benchmark, enabled: true, mix: "get:80,set:20", rate: RATE, durationSeconds: DURATION_S, clients: 4, mixImage: node }),
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
    `[pods] ${mode} mix get:80,set:20 at ${RATE}/s for ${DURATION_S} s in the benchmark Job: up ${Math.round((Date.now() - t0) / 1000)} s; ` +
      rows.map((r) => `${r.test} ${Math.round(r.rps)} rps p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms`).join("; ") +
      `; served ${mix?.served.commands.map((x) => `${x.test} ${x.servedPercent.toFixed(2)}%`).join(", ")}`,
  );
  expect(
    rows.map((r) => [r.mode, r.test, r.client_version]),
    tail(s.log),
  ).toEqual(["GET", "SET", "MIX"].map((t) => [mode, t, "vbench mix (ioredis)"]));
  const total = rows.find((r) => r.test === "MIX");
  expect(total?.requests).toBeGreaterThan(0.8 * RATE * DURATION_S);
  expect(total?.rps).toBeGreaterThan(0.5 * RATE);
  expect(mix?.openLoop?.rate).toBe(RATE);
  expect(mix?.openLoop?.series).toHaveLength(DURATION_S);
  const get = mix?.served.commands.find((x) => x.test === "get");
  expect(Math.abs((get?.servedPercent ?? 0) - 80)).toBeLessThanOrEqual(2);
  expect(mix?.latency.p999_ms.MIX).toBeGreaterThan(0);
  // The Job's pod: the node image, on the node without Valkey, succeeded.
  const pods = (await api<BenchmarkPods>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=valkey-benchmark")}`))
    .body.items;
  const ran = pods.filter((p) => p.spec.containers[0]?.image === node);
  expect(ran.map((p) => [p.spec.nodeName, p.status.phase])).toEqual([[clientNode, "Succeeded"]]);
}
