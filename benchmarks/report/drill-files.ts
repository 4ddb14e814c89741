/**
 * A run's drill results as the report reads them: raw/drill-<mode>-<fault>.json (written by
 * harness/drill/), each checked against the schema below; drill-section.ts renders them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const num = z.number().nullable();
export const drillFileSchema = z.object({
  mode: z.enum(["cluster", "replication"]),
  fault: z.string(),
  ok: z.boolean(),
  healed: z.boolean(),
  faultDescription: z.string(),
  writeOutageMs: z.number(),
  /** The outage ran to the load's end (a lower bound); absent in files written before it was reported. */
  writeOutageOpen: z.boolean().optional(),
  recoveryMs: num,
  detectionMs: num,
  writes: z.number(),
  failedWrites: z.number(),
  ackedWrites: z.number(),
  lostAckedWrites: z.number(),
  waitedWrites: z.number(),
  lostWaitedWrites: z.number(),
  /** Absent in files written before the bounds (bounds.ts). */
  unknownWrites: z.number().optional(),
  lostAckedOutsideBound: z.number().optional(),
  ackedLossBound: z
    .object({ fromMs: num, toMs: z.number(), writes: z.number(), reason: z.string() })
    .nullable()
    .optional(),
  /** Absent in files written before the two writers and the per-shard outage (ledger.ts, shard-outage.ts). */
  unexpectedReplies: z.number().optional(),
  failures: z.array(z.string()).optional(),
  waitWriter: z
    .object({
      writes: z.number(),
      ackedWrites: z.number(),
      lostAckedWrites: z.number(),
      lostAckedOutsideBound: z.number(),
    })
    .nullable()
    .optional(),
  aggregateOutageMs: z.number().optional(),
  shards: z
    .array(
      z.object({
        shard: z.string(),
        slots: z.number(),
        share: z.number(),
        outageMs: z.number(),
        failedWrites: z.number(),
        affected: z.boolean(),
      }),
    )
    .optional(),
  keyspaceStopped: z.object({ slots: z.number(), share: z.number(), forMs: z.number() }).nullable().optional(),
  p99MsBefore: num,
  p99MsDuring: num,
  maxMsDuring: num,
  timeline: z.array(z.object({ stream: z.string(), t: z.number(), latencyMs: num })),
  /** Drills run with `--metrics`: commands per second per member through Prometheus (core/drill/live-metrics.ts). */
  liveMetrics: z
    .object({
      query: z.string(),
      series: z.array(z.object({ pod: z.string(), points: z.array(z.tuple([z.number(), z.number()])) })),
    })
    .optional(),
});
export type DrillView = z.infer<typeof drillFileSchema>;

/** raw/drill-*.json of a run directory, in mode × fault order; a malformed file names itself. */
export function loadDrills(dir: string): DrillView[] | undefined {
  const raw = join(dir, "raw");
  if (!existsSync(raw)) return undefined;
  const files = readdirSync(raw)
    .filter((f) => /^drill-[a-z]+-[a-z-]+\.json$/.test(f))
    .sort();
  if (files.length === 0) return undefined;
  return files.map((f) => {
    const parsed = drillFileSchema.safeParse(JSON.parse(readFileSync(join(raw, f), "utf8")));
    if (!parsed.success)
      throw new Error(
        `${join(raw, f)}: not a drill result (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
      );
    return parsed.data;
  });
}
