/**
 * TopologyCheck, declared once (see ../kit/step.ts): what the verifier needs, the check's own
 * inputs and its report. It follows other steps (`after`): each run of one of them re-runs it.
 */
import { z } from "zod";
import { nonEmptyString, oneOf, rerun, wholeNumber } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import type { TopologyCheckReport } from "../../../core/verify/check-report.js";

/**
 * What the verifier needs to check a release: its pods and how to reach them, the mode, the
 * expected shape and the Sentinels. FailureDrill spreads these in too (its verifier decides recovery).
 */
export const verifierFields = {
  ...kubeTargetFields,
  /** In replication mode the pod labelled `valkey-on-eks/role=primary` is the seed (else the lowest ordinal). */
  mode: rerun(oneOf(["cluster", "replication"])),
  /** Expected shape (SHAPE_MISMATCH / REPLICA_COUNT when different); not checked when absent. */
  expect: rerun(
    z
      .object(
        {
          primaries: wholeNumber(1).optional(),
          replicasPerPrimary: wholeNumber(0).optional(),
          replicas: wholeNumber(0).optional(),
        },
        { error: "must be an object" },
      )
      .optional(),
  ),
  /** Replication mode: largest acceptable replica lag in bytes (the verifier's 1048576 when absent). */
  replicaLagBytes: rerun(wholeNumber(0).optional()),
  /**
   * Replication mode under Sentinel: discover the primary from the Sentinels (pods matching
   * `selector`, on `port`) and check them too (SENTINEL_QUORUM / _DISAGREE / _SAME_ZONE).
   */
  sentinel: rerun(
    z
      .object(
        {
          selector: nonEmptyString(),
          headlessService: nonEmptyString().optional(),
          port: wholeNumber(1),
          masterName: nonEmptyString(),
        },
        { error: "must be an object { selector, headlessService?, port, masterName }" },
      )
      .optional(),
  ),
};

export const checkStep = declareStep({
  type: "TopologyCheck",
  follows: true,
  fields: {
    ...verifierFields,
    /** Count keys (DBSIZE) per primary. */
    countKeys: rerun(z.boolean({ error: "must be true or false" }).default(true)),
    /** Any new value re-runs the check on an unchanged stack (config `checks.runId`). */
    runId: rerun(nonEmptyString().optional()),
  },
  outputs: {
    /**
     * The passing report, JSON-safe: ok, mode, failures, shards with zones, slot ranges and keys, primaries per zone.
     */
    report: output<TopologyCheckReport>(),
    /** The readable table (formatTopologyReport). */
    table: output<string>(),
  },
});

export type TopologyCheckInputs = InputsOf<typeof checkStep>;
export type TopologyCheckOutputs = OutputsOf<typeof checkStep>;
