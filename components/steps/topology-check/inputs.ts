/**
 * TopologyCheck's inputs, declared once: the component's args, the provider's parser, the keys
 * whose change re-runs the check and the secret keys all come from these fields
 * (see ../kit/inputs.ts).
 */
import { z } from "zod";
import { nonEmptyString, oneOf, parserOf, rerun, wholeNumber, type ArgsOf, type Parsed } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";

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
        { primaries: wholeNumber(1).optional(), replicasPerPrimary: wholeNumber(0).optional(), replicas: wholeNumber(0).optional() },
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
        { selector: nonEmptyString(), headlessService: nonEmptyString().optional(), port: wholeNumber(1), masterName: nonEmptyString() },
        { error: "must be an object { selector, headlessService?, port, masterName }" },
      )
      .optional(),
  ),
};

export const checkFields = {
  ...verifierFields,
  /** Count keys (DBSIZE) per primary. */
  countKeys: rerun(z.boolean({ error: "must be true or false" }).default(true)),
  /** What the steps this check follows last produced (their run stamps): a change re-runs the check. */
  triggers: rerun(z.array(z.unknown(), { error: "must be a list" }).default([])),
  /** Any new value re-runs the check on an unchanged stack (config `checks.runId`). */
  runId: rerun(nonEmptyString().optional()),
};

/** The component's args without `triggers` (the component builds them from `after`). */
export type TopologyCheckFieldArgs = Omit<ArgsOf<typeof checkFields>, "triggers">;
/** The inputs as the implementation reads them. */
export type TopologyCheckInputs = Parsed<typeof checkFields>;

export const parseCheckInputs = parserOf(checkFields);
