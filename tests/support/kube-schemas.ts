/**
 * Validating rendered Kubernetes objects with kubeconform (strict) against the official Kubernetes
 * JSON schemas (PyPI kubernetes-validate), Karpenter's CRDs (the Karpenter Go module) and the
 * Prometheus Operator's PodMonitor and PrometheusRule CRDs (its Go module), all
 * cached by `.ci/toolchain/install.sh --schemas` (see tests/support/toolchain.ts).
 *
 * - manifestOf: a resource recorded by the Pulumi mocks back into a manifest (apiVersion and kind
 *   from the type token, e.g. `kubernetes:apps/v1:StatefulSet` -> apps/v1 StatefulSet).
 * - crdJsonSchemas: a CRD's openAPIV3Schema as the JSON schema kubeconform loads, made strict
 *   (additionalProperties false wherever the CRD lists properties and does not preserve unknown
 *   fields) and with metadata checked as the official ObjectMeta. The CRDs' CEL rules
 *   (x-kubernetes-validations) are not evaluated: the e2e suite's real API server does that.
 * - kubeconform: one kubeconform process over a folder of manifests, per-file results.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import {
  KARPENTER_CRD_DIR,
  PROMETHEUS_OPERATOR_CRD_DIR,
  requireInstalled,
  toolchainData,
  toolchainDirs,
} from "./toolchain.js";

export interface Manifest {
  apiVersion: string;
  kind: string;
  [key: string]: unknown;
}

/** What manifestOf reads of a recorded resource (tests/support/pulumi-mocks.ts's RecordedResource). */
export interface RecordedObject {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  /** The inputs with every secret value replaced by "[secret]". */
  redacted: Record<string, unknown>;
}

export const REDACTED = "[secret]";

/**
 * The inputs with every string inside a secret replaced by "[secret]", keeping the shape (a secret
 * object stays an object, a secret number a number): what the schema sees is typed like the real
 * object, and no secret value reaches the manifest files.
 */
export function redactLeaves(inputs: unknown, redacted: unknown): unknown {
  const scrub = (v: unknown): unknown =>
    typeof v === "string"
      ? REDACTED
      : Array.isArray(v)
        ? v.map(scrub)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]))
          : v;
  if (redacted === REDACTED && inputs !== REDACTED) return scrub(inputs);
  if (Array.isArray(inputs) && Array.isArray(redacted)) return inputs.map((x, i) => redactLeaves(x, redacted[i]));
  if (inputs !== null && typeof inputs === "object" && redacted !== null && typeof redacted === "object") {
    const r = redacted as Record<string, unknown>;
    return Object.fromEntries(Object.entries(inputs).map(([k, x]) => [k, redactLeaves(x, r[k])]));
  }
  return inputs;
}

export type ManifestOf = { manifest: Manifest } | { skipped: string } | undefined;

const K8S_OBJECT = /^kubernetes:([a-z0-9.-]+)\/(v[a-z0-9]+):([A-Z][A-Za-z0-9]*)$/;

/**
 * The manifest of a recorded resource: `{ manifest }` for a Kubernetes object, `{ skipped: why }`
 * for a pulumi-kubernetes resource that is not one object (Helm releases and charts, YAML/kustomize
 * groups, server-side-apply patches), undefined for anything that is not pulumi-kubernetes.
 * Throws when the inputs' apiVersion/kind disagree with the type token.
 */
export function manifestOf(r: RecordedObject): ManifestOf {
  if (!r.type.startsWith("kubernetes:")) return undefined;
  if (/^kubernetes:helm\.sh\//.test(r.type))
    return {
      skipped: `${r.type} ${r.name}: a Helm release (its chart's objects are rendered by Helm, not by this program)`,
    };
  if (/^kubernetes:(yaml|kustomize)(\/v\d+)?:/.test(r.type))
    return { skipped: `${r.type} ${r.name}: a group of objects read from files` };
  const m = K8S_OBJECT.exec(r.type);
  if (!m)
    throw new Error(
      `${r.type} ${r.name}: not a pulumi-kubernetes object type token (kubernetes:<group>/<version>:<Kind>)`,
    );
  const [, group = "", version = "", kind = ""] = m;
  if (kind.endsWith("Patch")) return { skipped: `${r.type} ${r.name}: a server-side-apply patch (a partial object)` };
  const apiVersion = group === "core" ? version : `${group}/${version}`;
  const {
    apiVersion: inApiVersion,
    kind: inKind,
    ...rest
  } = redactLeaves(r.inputs, r.redacted) as Record<string, unknown>;
  if (inApiVersion !== undefined && inApiVersion !== apiVersion)
    throw new Error(
      `${r.type} ${r.name}: inputs say apiVersion ${JSON.stringify(inApiVersion)}, the type token ${apiVersion}`,
    );
  if (inKind !== undefined && inKind !== kind)
    throw new Error(`${r.type} ${r.name}: inputs say kind ${JSON.stringify(inKind)}, the type token ${kind}`);
  return { manifest: { apiVersion, kind, ...rest } };
}

type Schema = Record<string, unknown>;

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/** An OpenAPI v3 (structural CRD) schema as a strict JSON schema for kubeconform. */
export function strictSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictSchema);
  if (node === null || typeof node !== "object") return node;
  const s = node as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    // properties/patternProperties map names to schemas; every other key holds a schema, a list of them, or a value.
    out[k] =
      k === "properties" && v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v as Schema).map(([p, x]) => [p, strictSchema(x)]))
        : strictSchema(v);
  }
  if (s.nullable === true && typeof s.type === "string") out.type = [s.type, "null"];
  if (
    s.properties !== undefined &&
    s.additionalProperties === undefined &&
    s["x-kubernetes-preserve-unknown-fields"] !== true
  )
    out.additionalProperties = false;
  return out;
}

export interface CrdSchema {
  group: string;
  kind: string;
  version: string;
  schema: Schema;
}

/**
 * Every served version of every CRD in `dir` (*.yaml) as a strict JSON schema, metadata checked
 * against the ObjectMeta of `definitions` (the official schemas' _definitions.json).
 */
export function crdJsonSchemas(dir: string, definitions: string): CrdSchema[] {
  const objectMeta = { $ref: `${pathToFileURL(definitions).href}#/$defs/${OBJECT_META}` };
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => {
      const crd = parseYaml(readFileSync(join(dir, f), "utf8")) as {
        kind?: string;
        spec?: {
          group: string;
          names: { kind: string };
          versions: Array<{ name: string; served: boolean; schema?: { openAPIV3Schema?: Schema } }>;
        };
      };
      if (crd.kind !== "CustomResourceDefinition" || !crd.spec)
        throw new Error(`${join(dir, f)}: not a CustomResourceDefinition`);
      const { group, names, versions } = crd.spec;
      return versions
        .filter((v) => v.served)
        .map((v) => {
          const root = v.schema?.openAPIV3Schema;
          if (!root) throw new Error(`${join(dir, f)}: version ${v.name} has no openAPIV3Schema`);
          const schema = strictSchema(root) as Schema;
          schema.properties = { ...(schema.properties as Schema), metadata: objectMeta };
          return { group, kind: names.kind, version: v.name, schema };
        });
    });
}

/**
 * Writes the CRD schemas where kubeconform's `{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json` finds
 * them.
 */
export function writeCrdSchemas(schemas: CrdSchema[], dir: string): string {
  for (const s of schemas) {
    mkdirSync(join(dir, s.group), { recursive: true });
    writeFileSync(join(dir, s.group, `${s.kind.toLowerCase()}_${s.version}.json`), JSON.stringify(s.schema));
  }
  return join(dir, "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json");
}

export interface KubeconformResult {
  filename: string;
  kind: string;
  name: string;
  version: string;
  status: "statusValid" | "statusInvalid" | "statusError" | "statusSkipped" | "statusEmpty";
  msg: string;
}

/**
 * One strict kubeconform run over every manifest under `manifestsDir`: the official Kubernetes
 * schemas first, then Karpenter's and the Prometheus Operator's CRDs (converted into `crdSchemaDir`). No schema for a kind is an
 * error (statusError), never a skip.
 */
export function kubeconform(manifestsDir: string, crdSchemaDir: string): KubeconformResult[] {
  const bin = requireInstalled(join(toolchainDirs.kubeconform, "bin", "kubeconform"), "kubeconform");
  const k8s = requireInstalled(
    toolchainData["kubernetes-schemas"],
    "The Kubernetes JSON schemas (kubernetes-validate)",
  );
  const definitions = requireInstalled(
    join(k8s, "_definitions.json"),
    "The Kubernetes JSON schemas' _definitions.json",
  );
  const crds = writeCrdSchemas(
    [
      ...crdJsonSchemas(requireInstalled(KARPENTER_CRD_DIR, "Karpenter's CRDs"), definitions),
      ...crdJsonSchemas(requireInstalled(PROMETHEUS_OPERATOR_CRD_DIR, "The Prometheus Operator's CRDs"), definitions),
    ],
    crdSchemaDir,
  );
  const args = [
    "-strict",
    "-output",
    "json",
    "-verbose",
    "-schema-location",
    join(k8s, "{{ .ResourceKind }}{{ .KindSuffix }}.json"),
    "-schema-location",
    crds,
    manifestsDir,
  ];
  const run = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  // Exit 1 means "some resource is invalid"; anything else without JSON is a failure of kubeconform itself.
  let parsed: { resources?: KubeconformResult[] };
  try {
    parsed = JSON.parse(run.stdout) as { resources?: KubeconformResult[] };
  } catch {
    throw new Error(`kubeconform exited ${String(run.status)} without JSON output: ${run.stderr || run.stdout}`);
  }
  return parsed.resources ?? [];
}
