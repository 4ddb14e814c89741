/**
 * RestoreCheck: after a restore (`restore.from`), proves during `pulumi up` that each shard holds
 * what its backup held: DBSIZE on the primary now serving the shard's slots against the manifest's
 * key count (keys with a TTL may have expired since the snapshot), the counts coming from the
 * members' own restore reports (their `restore-place` termination messages), not from S3. A shard
 * off its count, or a release that restored nothing, fails `pulumi up`; the passing report goes
 * into the stack report (`restore`). Runs once per `restore.from` value (nothing else re-runs it);
 * the program places it after the TopologyCheck.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { restoreCheckStep } from "./declaration.js";

export type { RestoreCheckReport } from "./types.js";
export type RestoreCheckArgs = StepArgs<typeof restoreCheckStep>;

export class RestoreCheck extends defineStep(restoreCheckStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const restoreCheckProvider = () => RestoreCheck.provider();
