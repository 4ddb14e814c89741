/**
 * ClusterBootstrap, declared once (see ../kit/step.ts): the release's pods and how to reach them
 * (kubeTargetFields), the shape to form, and what the bootstrap reports. kubeconfig and password
 * are made secret whatever they were; connector defaults to "port-forward"; timeoutMs bounds each
 * wait (gossip, slot propagation, replica sync; the core's default 60000 when absent).
 */
import { z } from "zod";
import { rerun, setting, wholeNumber } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import type { PlanSummary } from "./types.js";

export const bootstrapStep = declareStep({
  type: "ClusterBootstrap",
  fields: {
    ...kubeTargetFields,
    /** Pods the selector must find, all ready and scheduled in a zone (usually P x (1 + M)). */
    expectedPods: rerun(wholeNumber(1)),
    /** P: primaries (shards). */
    primaries: rerun(wholeNumber(1)),
    /** M: replicas per primary. */
    replicasPerPrimary: rerun(wholeNumber(0)),
    /**
     * The members started from a backup (config `restore.from`): while no member has met another,
     * pods 0..P-1 (which restored shards 0..P-1) become the primaries with their snapshot's slots
     * and the others their replicas (core/backup/restore-bootstrap.ts). Otherwise ignored.
     */
    restored: setting(z.boolean().optional()),
  },
  outputs: {
    /** The cluster after the bootstrap, by pod name: shards with primary pod + zone, replicas + zones, slot ranges. */
    plan: output<PlanSummary>(),
    /** False when the pods already formed a healthy cluster of this shape. */
    changed: output<boolean>(),
    /** Pod name -> cluster node id. */
    nodeIds: output<Record<string, string>>(),
    /** What the executor did, in order. */
    steps: output<string[]>(),
  },
});

export type ClusterBootstrapInputs = InputsOf<typeof bootstrapStep>;
export type ClusterBootstrapOutputs = OutputsOf<typeof bootstrapStep>;
