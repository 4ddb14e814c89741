/**
 * The scale ladder's result file (`npm run bench:scale -- --json <dir>/scale-ladder.json`, apps/perf/scale-ladder.ts),
 * declared once: the ladder writes it through this schema and the report (`vbench report --from <dir>`) reads it
 * through the same one, for its "Cost as the cluster grows" chart (benchmarks/report/scale-section.ts).
 */
import { z } from "zod";
import { machineSchema } from "../run/machine.js";

/** The file's name in a results directory. */
export const SCALE_LADDER_FILE = "scale-ladder.json";

/** The ladder's steps, in the order it runs them. */
export const LADDER_STEPS = ["start", "bootstrap", "verify", "failover", "scaleOut", "scaleIn", "heal"] as const;
export type LadderStep = (typeof LADDER_STEPS)[number];

/** What each step measures, for tables and the chart's legend. */
export const LADDER_STEP_MEANING: Record<LadderStep, string> = {
  start: "processes answering PING (the machine's cost)",
  bootstrap: "empty processes → cluster_state:ok, every replica linked",
  verify: "the verifier over the live cluster (median of 3)",
  failover: "a tenth of the primaries killed → every such shard writable",
  scaleOut: "P → 2P primaries with data and a writer: MEET, slots with their keys, replicas linked",
  scaleIn: "2P → P primaries: the slots with their keys back, the added members forgotten",
  heal: "every member restarted on a new address → the verifier passes",
};

const ms = z.number().nonnegative();
const count = z.number().int().nonnegative();
const perStep = <T extends z.ZodTypeAny>(t: T) =>
  z.object(Object.fromEntries(LADDER_STEPS.map((s) => [s, t])) as Record<LadderStep, T>).strict();

export const ladderRungSchema = z
  .object({
    primaries: z.number().int().min(3),
    nodes: z.number().int().positive(),
    /** Primaries SIGKILLed at once in the failover step. */
    killed: count,
    /** Each step's time (the median when repeated). */
    ms: perStep(ms),
    /** With --repeat: every run's times per step. */
    samples: perStep(z.array(ms).min(1)).optional(),
    /** The failover's writers (no WAIT), one per killed primary: acknowledged (OK) writes and those lost. */
    writes: z
      .object({
        acked: count,
        lost: count,
        lostPerShard: z.record(z.string(), count),
        /** How long before the kill the oldest lost write was acknowledged; null: none lost. */
        oldestLostMsBeforeKill: ms.nullable(),
      })
      .strict(),
    /**
     * The heal: from the restart until every member answered PING (within ms.heal: the machine's cost of starting
     * that many processes at once), until every member's own heal.sh said it was healed (the second measure, each
     * from its own view), keys confirmed on disk (WAITAOF 1 1) before the full restart and those missing after it;
     * what the addresses the members left did: "dropped" (as a deleted pod's IP on EKS) or "refused: <why not
     * dropped>" (absent: files written before 2026-12-03, refused).
     */
    heal: z
      .object({ restartMs: ms, scriptsMs: ms, keys: count, missing: count, leftAddresses: z.string().optional() })
      .strict(),
    /**
     * P → 2P → P (scale-reshard.ts): of scaleOut / scaleIn the moving of slots; the data moved counted two ways (keys
     * the receiving primaries hold afterwards × bytes each; the receivers' own INFO stats of bytes received); the
     * writer's acknowledged writes, those lost, failed (deadline, error) and unexpected replies, its longest pause;
     * preloaded keys missing after. Absent: not run at this size (bench:scale --reshard-up-to).
     */
    reshard: z
      .object({
        outMoveMs: ms,
        inMoveMs: ms,
        keysMoved: count,
        bytesMoved: count,
        serverBytesIn: count,
        keysMovedBack: z.number().int(),
        serverBytesBack: count,
        writer: z
          .object({
            acked: count,
            lost: count,
            failed: count,
            unexpected: count,
            longestPauseMs: ms,
            /** The distinct errors or replies of the failed writes (at most 5). */
            failures: z.array(z.string()).max(5),
          })
          .strict(),
        dataMissing: count,
      })
      .strict()
      .optional(),
  })
  .strict();

export const ladderFileSchema = z
  .object({
    /** When the ladder finished (ISO 8601). */
    measuredAt: z.iso.datetime(),
    /** The valkey-server every member ran (`valkey-server --version`). */
    valkeyVersion: z.string().min(1),
    /** The machine: every member and the tool share its cores, so the figures are this machine's. */
    machine: machineSchema,
    replicasPerPrimary: count,
    nodeTimeoutMs: z.number().int().positive(),
    /** cluster-ping-interval on the failover's processes (--ping-interval-ms); absent: Valkey's, node timeout / 2. */
    pingIntervalMs: z.number().int().positive().optional(),
    rungs: z.array(ladderRungSchema).min(1),
  })
  .strict()
  .superRefine((f, ctx) => {
    f.rungs.forEach((r, i) => {
      if (i > 0 && r.primaries <= (f.rungs[i - 1] as LadderRung).primaries)
        ctx.addIssue({ code: "custom", path: ["rungs", i, "primaries"], message: "sizes must ascend" });
    });
  });

export type LadderRung = z.infer<typeof ladderRungSchema>;
export type LadderFile = z.infer<typeof ladderFileSchema>;
