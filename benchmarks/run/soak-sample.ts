/**
 * The one declaration of a soak's data: what one member's INFO gives a sample, one sample (a
 * window of load plus every member's INFO), an event found in the series, and the
 * `raw/soak-<mode>.json` file that holds them. Declared as zod schemas so the report's loader
 * checks a file against the same shape the sampler writes; the TypeScript types are inferred.
 * The sampler's modules import only types from here (erased at build time), so a bundled in-pod
 * sampler carries no zod; the field lists they need as values are in soak-fields.ts.
 */
import { z } from "zod";
import { INFO_NUMBERS, INFO_TEXTS, SOAK_EVENT_KINDS, type InfoNumber, type InfoText } from "./soak-fields.js";

const numbers = Object.fromEntries(INFO_NUMBERS.map((k) => [k, z.number().nullable()])) as Record<
  InfoNumber,
  z.ZodNullable<z.ZodNumber>
>;
const texts = Object.fromEntries(INFO_TEXTS.map((k) => [k, z.string().nullable()])) as Record<
  InfoText,
  z.ZodNullable<z.ZodString>
>;

/** One member's INFO at one sample; `error` when it did not answer (every field then null). */
export const memberInfoSchema = z.object({
  /** `host:port`. */
  member: z.string(),
  error: z.string().nullable(),
  ...numbers,
  ...texts,
});
export type MemberInfo = z.infer<typeof memberInfoSchema>;

/** One window of the soak: the load's figures over the window and every member's INFO at its end. */
export const soakSampleSchema = z.object({
  /** Seconds from the soak's start to the window's end. */
  t_s: z.number(),
  /** ISO 8601 wall clock at the window's end. */
  at: z.string(),
  window_s: z.number(),
  /** Replies recorded in the window (by the time they arrived) and error replies. */
  requests: z.number(),
  errors: z.number(),
  rps: z.number(),
  p50_ms: z.number(),
  p99_ms: z.number(),
  p999_ms: z.number(),
  max_ms: z.number(),
  members: z.array(memberInfoSchema),
});
export type SoakSample = z.infer<typeof soakSampleSchema>;

/** Something the series shows happened on a member, with the INFO evidence. */
export const soakEventSchema = z.object({
  kind: z.enum(SOAK_EVENT_KINDS),
  member: z.string(),
  /** The sample it was first seen in. */
  t_s: z.number(),
  at: z.string(),
  /** The INFO changes that show it, e.g. `aof_rewrites 0→1; latest_fork_usec 312`. */
  evidence: z.string(),
  /** An AOF rewrite's fork time (latest_fork_usec after it), µs. */
  fork_usec: z.number().nullable(),
  /** The highest window p99 while it lasted, when it is at least twice the soak's median window p99. */
  latency_spike: z.object({ p99_ms: z.number(), median_p99_ms: z.number() }).nullable(),
});
export type SoakEvent = z.infer<typeof soakEventSchema>;

/** A whole soak: the members' INFO before the load, the samples, the events. */
export const soakRecordSchema = z.object({
  sampleSeconds: z.number(),
  /** ISO 8601. */
  startedAt: z.string(),
  baseline: z.array(memberInfoSchema),
  samples: z.array(soakSampleSchema),
  events: z.array(soakEventSchema),
});
export type SoakRecord = z.infer<typeof soakRecordSchema>;

/** `raw/soak-<mode>.json`. */
export const soakFileSchema = soakRecordSchema.extend({ mode: z.enum(["replication", "cluster"]) });
export type SoakFile = z.infer<typeof soakFileSchema>;
