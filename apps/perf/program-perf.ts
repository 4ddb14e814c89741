/**
 * npm run bench:program [-- --primaries 3,10,30,100]
 *
 * How long the whole `cluster` stack takes to construct under Pulumi mocks (every component, every builder, the
 * dynamic providers' serialization: import + config + construction), against a 3 s bar at the stack file's own shape.
 * With --primaries, the same stack with valkey.cluster.primaries set to each size, each in its own process (the
 * mocks are per process): resources registered and time per size, and the exponent k of time ∝ P^k (issue 36: the
 * program at the shapes the scale ladder measures). Not a test: figures printed with their ratio to the bar, from
 * this run only; exits 1 when the bar is missed.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseYaml } from "yaml";
import { fittedExponent, neighbourExponents, parsePrimaryLadder } from "../../benchmarks/scale/scale-fit.js";
import { alignedLines } from "../../benchmarks/run/text-table.js";
import { awsMockInvokes, awsMockOutputs, installMocks } from "./pulumi-mock-recorder.js";

const BAR_MS = 3000;
const STACK_FILE = "stacks/Pulumi.cluster.yaml";

/** One size's figures (a child's one line of JSON). */
interface ProgramFigures {
  primaries: number;
  resources: number;
  /** Resources per type, the largest first. */
  byType: [string, number][];
  importMs: number;
  totalMs: number;
}

/** The stack file with valkey.cluster.primaries set to `primaries` (undefined: as the file has it), parsed. */
async function stackConfig(primaries: number | undefined) {
  const { parseStackConfig, rawFromPulumiConfig } = await import("../../config/schema.js");
  const document = parseYaml(readFileSync(STACK_FILE, "utf8")) as { config: Record<string, unknown> };
  const { raw } = rawFromPulumiConfig(document.config);
  if (primaries !== undefined) {
    const valkey = raw.valkey as { cluster: Record<string, unknown> };
    valkey.cluster = { ...valkey.cluster, primaries };
    // The NodePool's limits raised as a user asking for that shape must (the capacity rules refuse 30 × 2 pods
    // under the file's 64 vCPU); nothing else changes.
    const karpenter = raw.karpenter as { nodePool: Record<string, unknown> };
    karpenter.nodePool = { ...karpenter.nodePool, limits: { cpu: 4096, memory: "65536Gi" } };
  }
  return parseStackConfig(raw).config;
}

/** Constructs the stack under mocks in this process and measures it. */
async function measureHere(primaries: number | undefined): Promise<ProgramFigures> {
  let lastRegistration = 0;
  const recorder = installMocks({
    invokes: awsMockInvokes,
    stack: "cluster",
    outputs: (r) => {
      lastRegistration = performance.now();
      return awsMockOutputs(r);
    },
  });
  const started = performance.now();
  const { runProgram } = await import("../../stacks/program.js");
  const imported = performance.now();
  const config = await stackConfig(primaries);
  const out = runProgram({ stack: "cluster", config, password: pulumi.secret("perf-password") });
  await new Promise<void>((resolve) => out.report.apply(() => resolve()));
  // Registrations triggered from outputs may still trickle in: wait until none came for 100 ms.
  while (performance.now() - lastRegistration < 100) await new Promise((r) => setTimeout(r, 20));
  const byType = new Map<string, number>();
  for (const r of recorder.resources) byType.set(r.type, (byType.get(r.type) ?? 0) + 1);
  return {
    primaries: config.valkey.cluster.primaries,
    resources: recorder.resources.length,
    byType: [...byType].sort((a, b) => b[1] - a[1]),
    importMs: imported - started,
    totalMs: lastRegistration - started,
  };
}

/** One size in a child process (fresh mocks, fresh module cache): its JSON line. */
function measureInChild(primaries: number): ProgramFigures {
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", String(primaries)],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = out.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(line) as ProgramFigures;
  } catch {
    throw new Error(`the child for ${primaries} primaries printed no figures (last line: ${line.slice(0, 200)})`);
  }
}

function barLine(f: ProgramFigures): boolean {
  const ok = f.totalMs <= BAR_MS;
  console.log(`modules imported in ${f.importMs.toFixed(0)} ms`);
  console.log(
    `cluster stack (${f.primaries} primaries) under mocks: ${f.resources} resources registered in ${f.totalMs.toFixed(0)} ms (import + config + construction)`,
  );
  console.log(`vs bar ${BAR_MS} ms → ${(f.totalMs / BAR_MS).toFixed(2)}x of bar ${ok ? "PASS" : "FAIL"}`);
  return ok;
}

function ladderReport(rungs: readonly ProgramFigures[]): void {
  const growing = (a: ProgramFigures, b: ProgramFigures) =>
    b.byType.filter(([t, n]) => n !== (a.byType.find(([u]) => u === t)?.[1] ?? 0)).map(([t, n]) => `${t} ${n}`);
  const body = rungs.map((r, i) => [
    String(r.primaries),
    String(r.resources),
    r.totalMs.toFixed(0),
    i === 0 ? "" : growing(rungs[i - 1] as ProgramFigures, r).join(", ") || "none",
  ]);
  for (const l of alignedLines(["primaries", "resources", "ms", "types whose count changed"], body, 0)) console.log(l);
  if (rungs.length < 2) return;
  const points = rungs.map((r) => ({ primaries: r.primaries, ms: r.totalMs }));
  console.log(
    `exponent k (time ∝ P^k): ${neighbourExponents(points).join("  ")}  fitted: ${fittedExponent(points).toFixed(2)}`,
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { primaries: { type: "string" }, child: { type: "string" } },
  });
  if (values.child !== undefined) {
    console.log(JSON.stringify(await measureHere(Number(values.child))));
    return 0;
  }
  const own = measureInChild((await stackConfig(undefined)).valkey.cluster.primaries);
  const ok = barLine(own);
  if (values.primaries !== undefined) {
    console.log("");
    ladderReport(parsePrimaryLadder(values.primaries, []).map((p) => (p === own.primaries ? own : measureInChild(p))));
  }
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench:program: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
