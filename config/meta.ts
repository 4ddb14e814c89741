/**
 * Reads the stack schema's own metadata (shapes, types, defaults, `.describe()` text and
 * `.meta({ typeLabel, defaultText })`), for README's config table and for "did you mean"
 * suggestions on unknown keys.
 */
import { z } from "zod";

/** One documented key of the stack file. */
export interface KeyDoc {
  /** Dotted path below the project namespace, e.g. "valkey.cluster.primaries"; list items as "[]". */
  path: string;
  type: string;
  default: string;
  /** Whether `default` is a literal value (JSON) rather than prose such as "valkey.mode". */
  defaultIsValue: boolean;
  description: string;
}

type Schema = z.core.$ZodType;

/** The def fields this module reads; zod's def types are a union per schema kind. */
interface LooseDef {
  type: string;
  innerType?: Schema;
  in?: Schema;
  shape?: Record<string, Schema>;
  element?: Schema;
  options?: Schema[];
  valueType?: Schema;
  entries?: Record<string, string>;
  values?: unknown[];
  defaultValue?: unknown;
  format?: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
}

interface CheckDef {
  check: string;
  value?: unknown;
  inclusive?: boolean;
}

interface Meta {
  description?: string;
  typeLabel?: string;
  defaultText?: string;
}

const defOf = (schema: Schema): LooseDef => schema._zod.def;
const metaOf = (schema: Schema): Meta => z.globalRegistry.get(schema) ?? {};

const WRAPPERS = new Set(["default", "prefault", "optional", "nullable", "readonly", "catch"]);

/** Peels defaults, optionals and pipes off a schema, keeping the outermost description, labels and default. */
function unwrap(schema: Schema): { core: Schema; meta: Meta; defaultValue: unknown; hasDefault: boolean } {
  const meta: Meta = {};
  let defaultValue: unknown;
  let hasDefault = false;
  let current = schema;
  for (;;) {
    const own = metaOf(current);
    meta.description ??= own.description;
    meta.typeLabel ??= own.typeLabel;
    meta.defaultText ??= own.defaultText;
    const def = defOf(current);
    if ((def.type === "default" || def.type === "prefault") && !hasDefault) {
      defaultValue = def.defaultValue;
      hasDefault = true;
    }
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return { core: current, meta, defaultValue, hasDefault };
  }
}

/** " ≥ 1", " 1–256" or "" from a number schema's min/max checks. */
function range(def: LooseDef): string {
  let min: number | undefined;
  let max: number | undefined;
  for (const check of def.checks ?? []) {
    const { check: kind, value } = check._zod.def;
    if (kind === "greater_than" && typeof value === "number") min = value;
    if (kind === "less_than" && typeof value === "number") max = value;
  }
  if (min !== undefined && max !== undefined) return ` ${min}–${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  return max !== undefined ? ` ≤ ${max}` : "";
}

/** A short human type: "integer ≥ 1", "\"eks\" | \"byo\"", "list of string". */
export function typeLabel(schema: Schema): string {
  const { core, meta } = unwrap(schema);
  if (meta.typeLabel) return meta.typeLabel;
  const def = defOf(core);
  switch (def.type) {
    case "number":
      return (def.format?.includes("int") ? "integer" : "number") + range(def);
    case "enum":
      return Object.values(def.entries ?? {})
        .map((v) => JSON.stringify(v))
        .join(" | ");
    case "literal":
      return (def.values ?? []).map((v) => JSON.stringify(v)).join(" | ");
    case "array":
      return def.element ? `list of ${typeLabel(def.element)}` : "list";
    case "record":
      return def.valueType ? `map of string → ${typeLabel(def.valueType)}` : "map";
    case "union":
      return (def.options ?? []).map(typeLabel).join(" or ");
    case "object":
      return "object";
    default:
      return def.type;
  }
}

/** The object shape a schema holds (through wrappers), or undefined. */
export function shapeOf(schema: Schema): Record<string, Schema> | undefined {
  return defOf(unwrap(schema).core).shape;
}

/** The keys an object at `path` accepts (list items are addressed by number). */
export function knownKeysAt(root: Schema, path: ReadonlyArray<PropertyKey>): string[] {
  let current: Schema | undefined = root;
  for (const segment of path) {
    if (!current) return [];
    const core = unwrap(current).core;
    const def = defOf(core);
    current = typeof segment === "number" ? def.element : def.shape?.[String(segment)];
  }
  return current ? Object.keys(shapeOf(current) ?? {}) : [];
}

function defaultLabel(schema: Schema): Pick<KeyDoc, "default" | "defaultIsValue"> {
  const { meta, defaultValue, hasDefault, core } = unwrap(schema);
  if (meta.defaultText) return { default: meta.defaultText, defaultIsValue: false };
  if (!hasDefault || defOf(core).type === "object") return { default: "—", defaultIsValue: false };
  return { default: JSON.stringify(defaultValue).replaceAll(",", ", "), defaultIsValue: true };
}

/** Every key of an object schema, depth first, objects before their children. */
export function describeKeys(schema: Schema, prefix = ""): KeyDoc[] {
  const shape = shapeOf(schema) ?? {};
  return Object.entries(shape).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const { meta, core } = unwrap(child);
    const row: KeyDoc = { path, type: typeLabel(child), ...defaultLabel(child), description: meta.description ?? "" };
    const def = defOf(core);
    if (def.type === "object") return [row, ...describeKeys(child, path)];
    const element = def.type === "array" && def.element ? unwrap(def.element).core : undefined;
    if (element && defOf(element).type === "object") return [row, ...describeKeys(element, `${path}[]`)];
    return [row];
  });
}
