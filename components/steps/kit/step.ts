/**
 * A post-deploy step, declared once: its name, its input fields (inputs.ts), its outputs and
 * whether it follows other steps. Everything else comes from the declaration:
 *
 *  - the provider side (protocol.ts `dynamicProtocol(step, { run, idOf })`): the parser, the diff
 *    keys, the secret keys, and the type `run` must return (every declared output);
 *  - the Pulumi side (define-step.ts `defineStep(step, { implementation })`): the component
 *    class, its args (`after` for a step that follows), its output properties, the provider.
 *
 * Pulumi-free at run time: each step's implementation.ts imports its declaration in the
 * dynamic-provider process (loaded by tsx, without @pulumi/pulumi).
 */
import { z } from "zod";
import { parserOf, rerun, rerunKeys, secretKeys, type Fields, type Parsed } from "./inputs.js";

/** One output of a step, typed: `output<PlanSummary>()`. Only its key exists at run time. */
export interface Output<T> {
  readonly __output?: T;
}
export const output = <T>(): Output<T> => ({});
export type Outputs = Record<string, Output<unknown>>;

/** What a following step last saw of the steps it follows (their run stamps): a change re-runs it. */
export const triggersField = rerun(z.array(z.unknown(), { error: "must be a list" }).default([]));

type WithTriggers<F extends Fields, Follows extends boolean> = Follows extends true
  ? F & { triggers: typeof triggersField }
  : F;

export interface StepSpec<F extends Fields, O extends Outputs, Follows extends boolean> {
  /** The step's name, e.g. `TopologyCheck`: its component's type is `valkey-on-eks:steps:<type>`. */
  type: string;
  /** The inputs (inputs.ts roles: rerun / setting / secret). */
  fields: F;
  /** What `run` returns, each `output<T>()`: the component's output properties (plus `runStamp`). */
  outputs: O;
  /**
   * The step follows others: its component takes `after` (resources or values) and the step gets
   * a `triggers` field (a rerun field: what it follows last produced). @default false
   */
  follows?: Follows;
}

export interface StepDeclaration<
  F extends Fields = Fields,
  O extends Outputs = Outputs,
  Follows extends boolean = boolean,
> {
  readonly type: string;
  /** The fields, with `triggers` when the step follows others. */
  readonly fields: F;
  readonly outputs: O;
  readonly follows: Follows;
  /** The declared output names, in order. */
  readonly outputKeys: readonly string[];
  /** The provider's parser: typed inputs from the engine's untyped ones (errors name the key). */
  readonly parse: (p: Record<string, unknown>) => Parsed<F>;
  /** Keys whose change re-runs the step. */
  readonly rerunKeys: readonly string[];
  /** Keys never echoed into outputs. */
  readonly secretKeys: readonly string[];
}

export function declareStep<F extends Fields, O extends Outputs, Follows extends boolean = false>(
  spec: StepSpec<F, O, Follows>,
): StepDeclaration<WithTriggers<F, Follows>, O, Follows> {
  const follows = (spec.follows ?? false) as Follows;
  if ("runStamp" in spec.outputs)
    throw new Error(`step ${spec.type}: runStamp is every step's output, not one to declare`);
  const fields = (follows ? { ...spec.fields, triggers: triggersField } : spec.fields) as WithTriggers<F, Follows>;
  return {
    type: spec.type,
    fields,
    outputs: spec.outputs,
    follows,
    outputKeys: Object.keys(spec.outputs),
    parse: parserOf(fields),
    rerunKeys: rerunKeys(fields),
    secretKeys: secretKeys(fields),
  };
}

/** The inputs as a step's implementation reads them. */
export type InputsOf<S extends StepDeclaration> = Parsed<S["fields"]>;

/** What a step's `run` returns: every declared output. */
export type OutputsOf<S extends StepDeclaration> = {
  [K in keyof S["outputs"]]: S["outputs"][K] extends Output<infer T> ? T : never;
};
