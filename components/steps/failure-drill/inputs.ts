/**
 * FailureDrill's inputs, declared once (see ../kit/inputs.ts): the release's pods and how to reach
 * them (kubeTargetFields), what the topology check needs to verify it (mode, expect, sentinel),
 * the drill's settings (config `drills`) and where the in-cluster load writes to.
 */
import { z } from "zod";
import { FAULTS } from "../../../vocabulary/faults.js";
import type { Placement } from "../../shared.js";
import { anObject, nonEmptyString, oneOf, parserOf, rerun, setting, wholeNumber, type ArgsOf, type Parsed } from "../kit/inputs.js";
import { verifierFields } from "../topology-check/inputs.js";

const endpoint = z.object({ host: nonEmptyString(), port: wholeNumber(1) }, { error: "must be an object { host, port }" });

export const drillFields = {
  /** As TopologyCheck's (the verifier that decides recovery); the zone fault deletes the Sentinel pods too. */
  ...verifierFields,
  /** Faults, in order (config `drills.faults`). */
  faults: rerun(z.array(oneOf(FAULTS), { error: "must be a list of faults" }).min(1, { error: "must name at least one fault" })),
  /** Writes per second per load stream. */
  rate: rerun(wholeNumber(1)),
  /** Seconds of load before the fault. */
  preFaultS: rerun(wholeNumber(1)),
  /** Seconds the load Job writes for. */
  loadS: rerun(wholeNumber(1)),
  /** zone fault: seconds the zone stays cordoned. */
  zoneDownS: rerun(wholeNumber(0).default(30)),
  /** Bound on each recovery (fault → verifier passing), in seconds. */
  timeoutS: setting(wholeNumber(1).default(600)),
  /** The load pod's image (a Node ≥ 22 image). */
  image: rerun(nonEmptyString()),
  /** Where the load writes: cluster, the client Service; replication, the write Service (HAProxy), plus the Sentinel Service. */
  loadTarget: rerun(
    z.object(
      { host: nonEmptyString(), port: wholeNumber(1), sentinel: endpoint.extend({ masterName: nonEmptyString() }).optional() },
      { error: "must be an object { host, port, sentinel? }" },
    ),
  ),
  /** The release Secret holding the password (its name, not the value) and the key in it. */
  secretName: rerun(nonEmptyString().optional()),
  passwordKey: rerun(nonEmptyString().default("password")),
  /** The benchmark pod's placement (never on a Valkey node). */
  placement: rerun(anObject<Placement>()),
  /** sentinel.downAfterMilliseconds / cluster-node-timeout: the CSV's failureDetectionMs column. */
  failureDetectionMs: setting(wholeNumber(0).default(0)),
  /** WAIT 1 <ms> after each acknowledged write. */
  waitTimeoutMs: setting(wholeNumber(0).default(500)),
  /** How often the verifier is asked while waiting for recovery, in ms. */
  pollMs: setting(wholeNumber(1).default(2000)),
  /** What the steps this drill follows last produced (their run stamps): a change re-runs the drills. */
  triggers: rerun(z.array(z.unknown(), { error: "must be a list" }).default([])),
  /** Any new value re-runs the drills on an unchanged stack (config `drills.runId`). */
  runId: rerun(nonEmptyString().optional()),
};

/** The component's args without `triggers` (the component builds them from `after`). */
export type FailureDrillFieldArgs = Omit<ArgsOf<typeof drillFields>, "triggers">;
/** The inputs as the implementation reads them. */
export type FailureDrillInputs = Parsed<typeof drillFields>;

export const parseDrillInputs = parserOf(drillFields);
