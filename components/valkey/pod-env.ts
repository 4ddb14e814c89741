/**
 * The pod spec's side of a pod definition's environment (pod/definition.ts `env`): where each
 * variable a pod's scripts read comes from in Kubernetes. A name not known here is refused, so a
 * script cannot start reading a variable the manifests never set.
 */
import { CLI_AUTH_ENV, type PodDefinition } from "../../pod/definition.js";
import { PASSWORD_SECRET_KEY } from "../../pod/paths.js";
import { EXPORTER_PASSWORD_ENV } from "../../pod/exporter.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { requireStepEnv, type ScriptStep } from "../../pod/script-step.js";
import type { Container, EnvVar } from "./k8s-types.js";
import { podDnsTemplate } from "./naming.js";

export interface PodEnvContext {
  /** What the pods belong to, for the error (e.g. "StatefulSet valkey"). */
  owner: string;
  /** The governing headless Service: VALKEY_ANNOUNCE_HOST is the pod's stable DNS name through it. */
  headless: string;
  namespace: string;
  /** The password Secret; undefined = auth off. */
  secretName: string | undefined;
}

function envVar(name: string, c: PodEnvContext): EnvVar {
  switch (name) {
    case "POD_NAME":
      return { name, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } };
    case "VALKEY_ANNOUNCE_HOST":
      return { name, value: podDnsTemplate(c.headless, c.namespace) };
    case "VALKEY_ANNOUNCE_IP":
      return { name, valueFrom: { fieldRef: { fieldPath: "status.podIP" } } };
    case "VALKEY_AVAILABILITY_ZONE":
      return { name, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${ZONE_LABEL}']` } } };
    case "VALKEYCLI_AUTH":
    case "REDISCLI_AUTH":
    case EXPORTER_PASSWORD_ENV:
      if (c.secretName === undefined) throw new Error(`${c.owner}: the pod reads ${name} but auth is off (no Secret)`);
      return { name, valueFrom: { secretKeyRef: { name: c.secretName, key: PASSWORD_SECRET_KEY } } };
    default:
      throw new Error(`${c.owner}: the pod definition reads ${name}, which the pod spec does not know how to set`);
  }
}

/**
 * The container's `env`, one entry per variable the definition reads; POD_NAME goes before
 * VALKEY_ANNOUNCE_HOST even when no script reads it, because that value is built from
 * `$(POD_NAME)`, which Kubernetes expands only from a variable defined earlier in the list.
 * Without it the literal text is announced: on real pods every Sentinel announced
 * `$(POD_NAME).valkey-sentinel-headless…` and they kept replacing each other as peers
 * (`+sentinel-invalid-addr` every second in the drill's Sentinel events).
 */
export function podEnv(def: Pick<PodDefinition, "env">, c: PodEnvContext): EnvVar[] {
  const out: EnvVar[] = [];
  for (const name of def.env) {
    if (name === "VALKEY_ANNOUNCE_HOST" && !out.some((e) => e.name === "POD_NAME")) out.push(envVar("POD_NAME", c));
    if (!out.some((e) => e.name === name)) out.push(envVar(name, c));
  }
  return out;
}

/**
 * VALKEYCLI_AUTH / REDISCLI_AUTH from the password Secret (none when auth is off): the password reaches valkey-cli by
 * environment, never argv.
 */
export function cliAuthEnv(secretName: string | undefined): EnvVar[] {
  return secretName === undefined
    ? []
    : CLI_AUTH_ENV.map((name) => ({
        name,
        valueFrom: { secretKeyRef: { name: secretName, key: PASSWORD_SECRET_KEY } },
      }));
}

/** Container `c` running `step` (pod/script-step.ts), refused when its env lacks a variable the step's script needs. */
export function stepContainer(what: string, c: Container & { env: EnvVar[] }, step: ScriptStep): Container {
  requireStepEnv(
    `${what} ${c.name}`,
    step,
    c.env.map((e) => e.name),
  );
  return { ...c, command: step.command };
}
