/**
 * `pulumi up` of the cluster-mode byo stack at several shapes under the real engine, against the e2e control plane
 * (real etcd, kube-apiserver, scheduler, controller manager; kwok nodes) with a real valkey-server on every pod's IP
 * (support/pod-valkeys.ts), so the bootstrap and the topology check run for real (issue 36: the program at the
 * shapes the scale ladder measures; `npm run bench:program` measures the same program under mocks).
 *
 * Opt-in (each size is a whole `up` and `destroy`; not a test of speed, a measurement that prints):
 *
 *   VBENCH_UP_PRIMARIES=3,10,30 bash .ci/setup npx vitest run --project e2e tests/e2e/program-up-scale.test.ts
 *
 * For each size: wall time of `up` and of `destroy`, the resources created, the topology check's verdict, and the
 * time of each Kubernetes object and step run (from the engine's pre event to its outputs event, as this process
 * received them; components left out, their span is their children's), the slowest five printed; then the exponent
 * k of up's time ∝ P^k. Every size must succeed with the check inside `up` saying `ok` (the verifier's verdict) over
 * P primaries, a real server behind each of the 2P member pods, and the namespace gone after `destroy`, or the file
 * fails naming the size. The figures go to results/scale/program-up.json. Without VBENCH_UP_PRIMARIES it is skipped,
 * naming the variable.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "@pulumi/pulumi/automation/index.js";
import { fittedExponent, neighbourExponents, parsePrimaryLadder } from "../../benchmarks/scale/scale-fit.js";
import { alignedLines } from "../../benchmarks/run/text-table.js";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { namespaceDeleted, useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-secret`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const sizes = parsePrimaryLadder(process.env.VBENCH_UP_PRIMARIES, []);
const skip = sizes.length === 0 ? "set VBENCH_UP_PRIMARIES=<primaries,…> (e.g. 3,10,30) to run" : "";

/** One size's figures. */
interface UpFigures {
  primaries: number;
  pods: number;
  upMs: number;
  destroyMs: number;
  created: number;
  /** Each Kubernetes object's and step run's time from its pre event to its outputs event, the slowest first. */
  slowest: { resource: string; ms: number }[];
}

/**
 * "<kind> <name>" of a resource that does work of its own (a Kubernetes object, a dynamic step's run); undefined for
 * a component, whose span is only its children's.
 */
function leafOf(urn: string): string | undefined {
  const [types = "", name = ""] = urn.split("::").slice(-2);
  const leaf = types.split("$").at(-1) ?? "";
  if (!/^(kubernetes:|pulumi-nodejs:dynamic)/.test(leaf)) return undefined;
  return `${leaf.split(":").at(-1)} ${name}`;
}

/** Listens to the engine: each resource's pre event and outputs event times, in this process's clock. */
function resourceClock(): { onEvent: (e: EngineEvent) => void; slowest: (n: number) => UpFigures["slowest"] } {
  const pre = new Map<string, number>();
  const took = new Map<string, number>();
  return {
    onEvent: (e) => {
      const now = performance.now();
      if (e.resourcePreEvent !== undefined) pre.set(e.resourcePreEvent.metadata.urn, now);
      const done = e.resOutputsEvent?.metadata.urn;
      if (done !== undefined && pre.has(done)) took.set(done, now - pre.get(done)!);
    },
    slowest: (n) =>
      [...took]
        .map(([urn, ms]) => ({ leaf: leafOf(urn), ms }))
        .filter((r) => r.leaf !== undefined)
        .sort((a, b) => b.ms - a.ms)
        .slice(0, n)
        .map((r) => ({ resource: r.leaf!, ms: r.ms })),
  };
}

const ctx = useE2eContext(undefined, { startTimeoutMs: 180_000 });

/** One shape: up (timed), its topology verdict checked, destroy (timed), the namespace gone. */
async function upAt(primaries: number): Promise<UpFigures> {
  const namespace = `valkey-up-${primaries}`;
  const config = {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: { namespace, mode: "cluster", cluster: { primaries, replicasPerPrimary: 1 }, ...SMALL_VALKEY_PODS },
    benchmark: { enabled: false },
    checks: { bootstrap: true, verify: true, connector: "direct" },
  };
  const s = await createStack(ctx.env, config, { password: PASSWORD });
  const valkeys = standInForPods(ctx.core, namespace, PASSWORD);
  try {
    const clock = resourceClock();
    const started = performance.now();
    const up = await s.stack.up({ onOutput: (o) => s.log.push(o), onEvent: clock.onEvent });
    const upMs = performance.now() - started;
    expect(up.summary.result, `${primaries} primaries: ${tail(s.log)}`).toBe("succeeded");
    expect(valkeys.errors, `${primaries} primaries`).toEqual([]);
    const topology = (up.outputs.report?.value as { topology: { ok: boolean; primaries: unknown[] } | null }).topology;
    expect(topology?.ok, `${primaries} primaries: the topology check inside up`).toBe(true);
    expect(topology?.primaries, `${primaries} primaries`).toHaveLength(primaries);
    const pods = valkeys.servers.size;
    expect(pods, `${primaries} primaries: a real server per member pod`).toBe(primaries * 2);
    const destroyStarted = performance.now();
    await s.stack.destroy({ onOutput: (o) => s.log.push(o) });
    const destroyMs = performance.now() - destroyStarted;
    await namespaceDeleted(ctx, namespace, 120_000);
    return {
      primaries,
      pods,
      upMs,
      destroyMs,
      created: up.summary.resourceChanges?.create ?? 0,
      slowest: clock.slowest(5),
    };
  } finally {
    await valkeys.stop();
    await s.stack.workspace.removeStack(s.name, { force: true }).catch(() => undefined);
  }
}

function report(rungs: readonly UpFigures[]): void {
  const s = (ms: number): string => (ms / 1000).toFixed(1);
  const body = rungs.map((r) => [
    String(r.primaries),
    String(r.pods),
    String(r.created),
    s(r.upMs),
    s(r.destroyMs),
    r.slowest.map((x) => `${x.resource} ${s(x.ms)}`).join("; "),
  ]);
  const header = ["primaries", "pods", "created", "up s", "destroy s", "slowest resources (s)"];
  for (const l of alignedLines(header, body, 0)) console.log(l);
  if (rungs.length < 2) return;
  const points = rungs.map((r) => ({ primaries: r.primaries, ms: r.upMs }));
  console.log(
    `up: exponent k (time ∝ P^k): ${neighbourExponents(points).join("  ")}  fitted: ${fittedExponent(points).toFixed(2)}`,
  );
}

describe.skipIf(skip !== "")(`pulumi up at several cluster shapes on the e2e control plane ${skip}`, () => {
  it(
    `comes up with a passing topology check at ${sizes.join(", ")} primaries, each timed`,
    async () => {
      const rungs: UpFigures[] = [];
      for (const p of sizes) {
        rungs.push(await upAt(p));
        mkdirSync("results/scale", { recursive: true });
        writeFileSync(
          "results/scale/program-up.json",
          `${JSON.stringify({ date: new Date().toISOString(), rungs }, null, 2)}\n`,
        );
      }
      report(rungs);
    },
    sizes.reduce((t, p) => t + 300_000 + p * 20_000, 0),
  );
});
