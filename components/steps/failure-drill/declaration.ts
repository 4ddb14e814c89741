/**
 * FailureDrill, declared once (see ../kit/step.ts): the release's pods and how to reach them
 * (kubeTargetFields), what the topology check needs to verify it (mode, expect, sentinel), the
 * drill's settings (config `drills`), where the in-cluster load writes to, and the figures. It
 * follows other steps (`after`): each run of one of them re-runs the drills.
 */
import { z } from "zod";
import { FAULTS } from "../../../vocabulary/faults.js";
import type { Placement } from "../../shared.js";
import { anObject, nonEmptyString, oneOf, rerun, setting, wholeNumber } from "../kit/inputs.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import { verifierFields } from "../topology-check/declaration.js";
import type { DeployedDrill } from "./types.js";

const endpoint = z.object(
  { host: nonEmptyString(), port: wholeNumber(1) },
  { error: "must be an object { host, port }" },
);

const drillFields = {
  /** As TopologyCheck's (the verifier that decides recovery); the zone fault deletes the Sentinel pods too. */
  ...verifierFields,
  /** Faults, in order (config `drills.faults`). */
  faults: rerun(
    z.array(oneOf(FAULTS), { error: "must be a list of faults" }).min(1, { error: "must name at least one fault" }),
  ),
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
  /**
   * freeze, partition: the privileged fault agent's image (sh, GNU date, nsenter, kill: the release's Valkey image).
   * @default image
   */
  agentImage: rerun(nonEmptyString().optional()),
  /**
   * Where the load writes: cluster, the client Service; replication, the write Service (HAProxy), plus the Sentinel
   * Service.
   */
  loadTarget: rerun(
    z.object(
      {
        host: nonEmptyString(),
        port: wholeNumber(1),
        sentinel: endpoint.extend({ masterName: nonEmptyString() }).optional(),
      },
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
  /** A Prometheus HTTP API to read each drill's alerts from (config `drills.alertsFrom`). @default none: no alerts */
  alertsFrom: setting(z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional()),
  /** Any new value re-runs the drills on an unchanged stack (config `drills.runId`). */
  runId: rerun(nonEmptyString().optional()),
};

export const drillStep = declareStep({
  type: "FailureDrill",
  follows: true,
  fields: drillFields,
  outputs: {
    /** One row per fault, in order: the local drills' figures (recoveryMs, writeOutageMs, lost writes, latencies). */
    drills: output<DeployedDrill[]>(),
    /** drills.csv (renderDrillsCsv). */
    csv: output<string>(),
    /** Which clock each time comes from. */
    note: output<string>(),
  },
});

export type FailureDrillInputs = InputsOf<typeof drillStep>;
export type FailureDrillOutputs = OutputsOf<typeof drillStep>;
