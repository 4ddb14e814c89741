/**
 * Helpers the implementation modules share for the dynamic-provider protocol: reading typed
 * values out of the engine's untyped inputs, echoing the non-secret inputs into the outputs,
 * and a diff over named keys.
 */
import { isDeepStrictEqual } from "node:util";
import type * as pulumi from "@pulumi/pulumi";

type Props = Record<string, unknown>;
export type DiffResult = pulumi.dynamic.DiffResult;

/** Reads a required string; the message names the key, never a value. */
export function str(p: Props, key: string): string {
  const v = p[key];
  if (typeof v !== "string" || v === "") throw new Error(`input '${key}' must be a non-empty string`);
  return v;
}

export function optStr(p: Props, key: string): string | undefined {
  const v = p[key];
  return v === undefined || v === null || v === "" ? undefined : str(p, key);
}

export function int(p: Props, key: string, min = 0): number {
  const v = p[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new Error(`input '${key}' must be a whole number ≥ ${min}`);
  return v;
}

export function optInt(p: Props, key: string, min = 0): number | undefined {
  return p[key] === undefined || p[key] === null ? undefined : int(p, key, min);
}

/** One of `allowed`; `fallback` when absent (required when there is no fallback). */
export function oneOf<T extends string>(p: Props, key: string, allowed: readonly T[], fallback?: T): T {
  const v = p[key] ?? fallback;
  if (!allowed.includes(v as T)) throw new Error(`input '${key}' must be one of ${allowed.join(", ")}`);
  return v as T;
}

/** The inputs without the secret keys: what may be stored as plain outputs. */
export function publicInputs(p: Props, secretKeys: readonly string[]): Props {
  return Object.fromEntries(Object.entries(p).filter(([k]) => !secretKeys.includes(k) && k !== "__provider"));
}

/**
 * Changes when any of `keys` differs between the stored outputs and the new inputs: updates in
 * place, or with `replace` replacements naming the changed keys (in the order of `keys`).
 */
export function diffKeys(olds: Props, news: Props, keys: readonly string[], replace = false): pulumi.dynamic.DiffResult {
  const changed = keys.filter((k) => !isDeepStrictEqual(olds[k] ?? null, news[k] ?? null));
  return { changes: changed.length > 0, replaces: replace ? changed : [] };
}

/** A JSON round trip: drops undefined fields so outputs are plain data. */
export function jsonSafe<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** How one implementation module answers the dynamic-provider protocol. */
export interface ProtocolSpec<I, D = never, R extends object = object> {
  /** Typed inputs from the engine's untyped ones. */
  parse(p: Props): I;
  /**
   * Does the work; its result (JSON-safe) joins the non-secret inputs as the outputs. `deps` are
   * a test's fakes (see tsModuleProvider); undefined in a program.
   */
  run(i: I, deps?: D): Promise<R>;
  /** The resource id for these inputs (and what `run` returned for them). */
  idOf(p: Props, result: R): string;
  /** Inputs whose change re-runs `run` (secrets are left out: a rotated token re-runs nothing). */
  diffKeys: readonly string[];
  /** A change of `diffKeys` replaces the resource instead of updating it. @default false */
  replaceOnChange?: boolean;
  /** Inputs never echoed into the outputs. */
  secretKeys: readonly string[];
  /** Throws to refuse an update from the stored outputs to the new inputs. */
  checkUpdate?(olds: Props, news: Props): void;
}

/** What an implementation module loaded by tsModuleProvider exports (`D`: its tests' fakes). */
export interface DynamicImplModule<D = never> {
  create: (inputs: Props, deps?: D) => Promise<{ id: string; outs: Props }>;
  diff: (id: string, olds: Props, news: Props) => DiffResult;
  update: (id: string, olds: Props, news: Props, deps?: D) => Promise<{ outs: Props }>;
}

/** `create` / `diff` / `update` for an implementation module to export. */
export function dynamicProtocol<I, D = never, R extends object = object>(spec: ProtocolSpec<I, D, R>): DynamicImplModule<D> {
  const run = async (news: Props, deps: D | undefined): Promise<{ result: R; outs: Props }> => {
    const result = await spec.run(spec.parse(news), deps);
    return { result, outs: jsonSafe({ ...publicInputs(news, spec.secretKeys), ...result }) };
  };
  return {
    create: async (inputs, deps) => {
      const { result, outs } = await run(inputs, deps);
      return { id: spec.idOf(inputs, result), outs };
    },
    diff: (_id, olds, news) => diffKeys(olds, news, spec.diffKeys, spec.replaceOnChange),
    update: async (_id, olds, news, deps) => {
      spec.checkUpdate?.(olds, news);
      return { outs: (await run(news, deps)).outs };
    },
  };
}
