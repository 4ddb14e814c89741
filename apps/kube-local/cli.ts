/**
 * npm run --silent kube:local -- up|down|status [--json] [--zones a,b,c,d]
 *
 * up      start the local real cluster (docs/real-cluster.md) unless a healthy one runs; print
 *         the kubeconfig path (--json: {"kubeconfig", "nodes": [{"name", "zone"}], "images"})
 * down    stop every process and remove every namespace, cgroup, mount and file it made
 * status  the same output as `up` while the cluster runs; exit code 1 when none runs
 * --zones one node per zone (default us-west-2a,us-west-2b,us-west-2c); add a fourth zone the
 *         stack does not list for the pods it keeps off Valkey nodes (the benchmark, the drill load)
 */
import { Command } from "commander";
import { down, STATE_DIR, status, up, type ClusterStatus } from "./cluster.js";
import { clusterPlan, DEFAULT_ZONES } from "./plan.js";

const planOf = (zones: string | undefined) =>
  clusterPlan(STATE_DIR, zones === undefined ? DEFAULT_ZONES : zones.split(",").map((z) => z.trim()));
const ZONES_HELP = `one node per zone, comma-separated (default ${DEFAULT_ZONES.join(",")})`;

function print(s: ClusterStatus, json: boolean): void {
  if (json) {
    const out = {
      kubeconfig: s.kubeconfig,
      nodes: s.nodes.map((n) => ({ name: n.name, zone: n.zone })),
      images: s.images,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    process.stdout.write(`${s.kubeconfig}\n`);
    for (const n of s.nodes) process.stderr.write(`  ${n.name} (${n.zone}) ${n.ready ? "Ready" : "NotReady"}\n`);
  }
}

const program = new Command("kube:local").description("a real multi-node Kubernetes on this machine");
program
  .command("up")
  .option("--json", "print JSON")
  .option("--zones <zones>", ZONES_HELP)
  .action(async (o: { json?: boolean; zones?: string }) => {
    const t0 = Date.now();
    const s = await up((m) => process.stderr.write(`[kube:local] ${m}\n`), planOf(o.zones));
    process.stderr.write(`[kube:local] up in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    print(s, o.json ?? false);
  });
program.command("down").action(async () => {
  await down();
  process.stderr.write("[kube:local] down\n");
});
program
  .command("status")
  .option("--json", "print JSON")
  .option("--zones <zones>", ZONES_HELP)
  .action(async (o: { json?: boolean; zones?: string }) => {
    const s = await status(planOf(o.zones));
    if (!s) {
      process.stderr.write("[kube:local] not running\n");
      process.exitCode = 1;
      return;
    }
    print(s, o.json ?? false);
    if (!s.nodes.every((n) => n.ready)) process.exitCode = 1;
  });
program.parseAsync().catch((e: unknown) => {
  process.stderr.write(`[kube:local] error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
