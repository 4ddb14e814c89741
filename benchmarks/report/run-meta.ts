/**
 * run.json: what a local run (or a `vbench bench` run against an endpoint) knows about itself that results.csv does not
 * carry (the full
 * workload, tool versions, the machine, the topologies it started). Written next to
 * results.csv by `vbench local`; read by the report loader. Optional: a results directory
 * without it still renders, with those facts marked "not recorded".
 */
import { z } from "zod";
import type { Workload } from "../../vocabulary/workload.js";
import { captureMachine, machineSchema, type MachineView } from "../run/machine.js";

export const RUN_META_VERSION = 1;
export const RUN_META_FILE = "run.json";

export const runMetaSchema = z.object({
  schemaVersion: z.literal(RUN_META_VERSION),
  kind: z.literal("local-run"),
  workload: z.object({
    name: z.string(),
    requests: z.number(),
    clients: z.number(),
    pipeline: z.number(),
    dataSize: z.number(),
    threads: z.number(),
    keyspaceLength: z.number(),
    tests: z.array(z.string()),
    minDurationSeconds: z.number(),
    maxRequests: z.number(),
  }),
  versions: z.object({ server: z.string(), client: z.string(), cli: z.string() }),
  /** The machine the benchmark ran on; absent for a deployed stack's sweep (it ran in the cluster). */
  machine: machineSchema.optional(),
  /** e.g. ["replication: 1 primary + 3 replicas", "cluster: 3 primaries × 1 replica(s), 6 nodes"] */
  topologies: z.array(z.string()),
  /** `vbench bench`: the endpoint measured (`host:port`); absent for runs on local servers. */
  target: z.string().optional(),
  /**
   * A sweep of a deployed stack (`npm run sweep:stack`): the stack, its platform and zones. The
   * benchmark ran as the stack's Job inside its cluster; this machine only drove Pulumi.
   */
  stack: z.object({ name: z.string(), platform: z.string(), zones: z.array(z.string()) }).optional(),
});

export type RunMeta = z.infer<typeof runMetaSchema>;

export function buildRunMeta(
  workload: Workload,
  versions: { server: string; client: string; cli: string },
  topologies: string[],
  machine: MachineView = captureMachine(),
): RunMeta {
  return {
    schemaVersion: RUN_META_VERSION,
    kind: "local-run",
    workload: { ...workload, tests: [...workload.tests] },
    versions,
    machine,
    topologies,
  };
}
