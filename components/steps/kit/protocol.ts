/**
 * The dynamic-provider protocol the step implementations answer (ts-module-provider.ts calls
 * it): parse the inputs with the step's declaration (step.ts), run, echo the non-secret inputs
 * plus the declared outputs and a fresh `runStamp` into the outputs, diff over the step's `rerun`
 * fields, and check the new inputs against the last applied ones (a step's optional `check` hook).
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import type { InputsOf, OutputsOf, StepDeclaration } from "./step.js";

type Props = Record<string, unknown>;
export type DiffResult = pulumi.dynamic.DiffResult;

/** The inputs without the secret keys: what may be stored as plain outputs. */
export function publicInputs(p: Props, secretKeys: readonly string[]): Props {
  return Object.fromEntries(Object.entries(p).filter(([k]) => !secretKeys.includes(k) && k !== "__provider"));
}

/**
 * Changes when any of `keys` differs between the stored outputs and the new inputs: updates in
 * place, or with `replace` replacements naming the changed keys (in the order of `keys`).
 */
export function diffKeys(
  olds: Props,
  news: Props,
  keys: readonly string[],
  replace = false,
): pulumi.dynamic.DiffResult {
  const changed = keys.filter((k) => !isDeepStrictEqual(olds[k] ?? null, news[k] ?? null));
  return { changes: changed.length > 0, replaces: replace ? changed : [] };
}

/** A JSON round trip: drops undefined fields so outputs are plain data. */
export function jsonSafe<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** How one step's implementation module answers the dynamic-provider protocol (`S`: its declaration). */
export interface StepImplementation<S extends StepDeclaration, D = never> {
  /**
   * Does the work; its result (JSON-safe, every declared output) joins the non-secret inputs as
   * the outputs. `deps` are a test's fakes (see tsModuleProvider); undefined in a program.
   */
  run(i: InputsOf<S>, deps?: D): Promise<OutputsOf<S>>;
  /** The resource id for these inputs and what `run` returned for them. */
  idOf(i: InputsOf<S>, result: OutputsOf<S>): string;
  /** A change of a `rerun` field replaces the resource instead of updating it. @default false */
  replaceOnChange?: boolean;
  /** Throws to refuse an update from the stored outputs to the new inputs. */
  checkUpdate?(olds: Props, news: Props): void;
  /**
   * Refusals of the new inputs given the last applied ones (`olds` is `{}` for a resource not
   * yet created). Called by the engine's Check, which runs in `pulumi preview` and, in `up`,
   * before the resource (and anything that depends on it) changes: a refusal here stops both.
   */
  check?(olds: Props, news: Props): CheckFailure[];
}

/** One refusal from a step's `check`: the input key and why, naming what to do instead. */
export interface CheckFailure {
  property: string;
  reason: string;
}

/** A new value each time a step runs (create or update): what the steps after it follow. */
export function newRunStamp(): string {
  return `${new Date().toISOString()}/${randomUUID().slice(0, 8)}`;
}

/** What an implementation module loaded by tsModuleProvider exports (`D`: its tests' fakes). */
export interface DynamicImplModule<D = never> {
  /** Optional for modules written by hand; dynamicProtocol always gives it. */
  check?: (olds: Props, news: Props) => { inputs: Props; failures: CheckFailure[] };
  create: (inputs: Props, deps?: D) => Promise<{ id: string; outs: Props }>;
  diff: (id: string, olds: Props, news: Props) => DiffResult;
  update: (id: string, olds: Props, news: Props, deps?: D) => Promise<{ outs: Props }>;
  /**
   * What `pulumi destroy` undoes; called only when the provider was made with `{ undoes: true }`
   * (ts-module-provider.ts).
   */
  destroy?: (id: string, props: Props) => Promise<unknown>;
}

/** `check` / `create` / `diff` / `update` for a step's implementation module to export. */
export function dynamicProtocol<S extends StepDeclaration, D = never>(
  step: S,
  impl: StepImplementation<S, D>,
): Required<Omit<DynamicImplModule<D>, "destroy">> {
  const run = async (news: Props, deps: D | undefined): Promise<{ id: string; outs: Props }> => {
    const i = step.parse(news) as InputsOf<S>;
    const result = await impl.run(i, deps);
    return {
      id: impl.idOf(i, result),
      outs: jsonSafe({ ...publicInputs(news, step.secretKeys), ...result, runStamp: newRunStamp() }),
    };
  };
  return {
    // The new inputs unchanged (as without a check), plus the step's refusals if it has a hook.
    check: (olds, news) => ({ inputs: news, failures: impl.check?.(olds, news) ?? [] }),
    create: (inputs, deps) => run(inputs, deps),
    diff: (_id, olds, news) => diffKeys(olds, news, step.rerunKeys, impl.replaceOnChange),
    update: async (_id, olds, news, deps) => {
      impl.checkUpdate?.(olds, news);
      return { outs: (await run(news, deps)).outs };
    },
  };
}
