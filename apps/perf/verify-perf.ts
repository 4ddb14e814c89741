/**
 * npm run bench:verify — the verifier against its bars:
 *   1. pure analysis of 1000 primaries + 1000 replicas over 3 zones (synthetic captured
 *      replies): median of several runs ≤ 50 ms;
 *   2. verifyTopology end to end on a live local 64-node cluster (32 x 1): median ≤ 1 s.
 * Prints each measurement with its ratio to the bar; exits 1 when a bar is missed.
 */
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { analyseCluster } from "../../core/verify/cluster-analysis.js";
import { synthesiseCluster } from "../../core/verify/synthetic.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";

const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function line(what: string, ms: number, barMs: number): boolean {
  const ok = ms <= barMs;
  console.log(
    `${what}: median ${ms.toFixed(1)} ms vs bar ${barMs} ms → ${(ms / barMs).toFixed(2)}x of bar ${ok ? "PASS" : "FAIL"}`,
  );
  return ok;
}

async function main(): Promise<number> {
  let ok = true;

  const synth = synthesiseCluster(1000, 1, ZONES);
  const times: number[] = [];
  for (let i = 0; i < 3; i++) analyseCluster(synth.capture, { zones: synth.zones }); // warm-up
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    const r = analyseCluster(synth.capture, { zones: synth.zones });
    times.push(performance.now() - t);
    if (!r.ok || r.shards.length !== 1000)
      throw new Error(`synthetic topology analysed wrong: ${JSON.stringify(r.failures.slice(0, 3))}`);
  }
  ok = line("analysis, 1000 primaries + 1000 replicas (15 runs)", median(times), 50) && ok;

  const fleet = new LocalFleet();
  try {
    const t0 = performance.now();
    const cluster = await startLocalCluster(fleet, {
      primaries: 32,
      replicasPerPrimary: 1,
      zones: ZONES,
      timeoutMs: 120_000,
    });
    console.log(`started a live 64-node cluster (32 x 1) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const connector = new DirectConnector();
    const zones = new StaticZoneSource(cluster.zoneMap);
    const live: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = await verifyTopology({
        mode: "cluster",
        seeds: [cluster.seed],
        connector,
        zones,
        expect: { primaries: 32, replicasPerPrimary: 1 },
      });
      live.push(performance.now() - t);
      if (!r.ok) throw new Error(`live cluster did not verify: ${JSON.stringify(r.failures.slice(0, 3))}`);
      if (r.nodeCount !== 64) throw new Error(`expected 64 nodes, verifier saw ${r.nodeCount}`);
    }
    ok = line("verifyTopology end to end, live 64-node cluster (5 runs)", median(live), 1000) && ok;
  } finally {
    await fleet.stopAll();
  }
  console.log(ok ? "bench:verify: all bars met" : "bench:verify: a bar was missed");
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench:verify: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
