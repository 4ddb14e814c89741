/**
 * The Pulumi side of a step's declaration (step.ts): `defineStep` gives the component class users
 * create, of one shape for every step: a ComponentResource `valkey-on-eks:steps:<type>` with one
 * child dynamic resource `${name}-run` (`{ parent: this }`), whose provider is the kit's tsx shell
 * over the step's implementation.ts (ts-module-provider.ts). The child's inputs are the fields
 * (defaults filled in, secrets wrapped: resource-inputs.ts) plus `triggers` for a step that
 * follows others (`after`); the component's output properties are the declared outputs plus
 * `runStamp`, each set from the child's and registered.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import type { ArgsOf } from "./inputs.js";
import { resourceInputs } from "./resource-inputs.js";
import type { OutputsOf, StepDeclaration } from "./step.js";
import { tsModuleProvider } from "./ts-module-provider.js";

/** Every step's component type: `valkey-on-eks:steps:<type>`. */
export const STEP_TYPE_PREFIX = "valkey-on-eks:steps:";
/** The type of every step's child resource (a dynamic resource of no module). */
export const STEP_RUN_TYPE = "pulumi-nodejs:dynamic:Resource";

/** A step whose every run yields a new `runStamp` (every step defined here). */
export interface RunStamped {
  readonly runStamp: pulumi.Output<string>;
}

/**
 * What a following step keys on for one `after` value: a step's run stamp (each of its runs
 * re-runs the follower), another resource's URN (only its creation: a URN never changes), or
 * the value itself.
 */
export function triggerOf(a: pulumi.Input<unknown>): pulumi.Input<unknown> {
  if (!pulumi.Resource.isInstance(a)) return a;
  const stamp = (a as Partial<RunStamped>).runStamp;
  return pulumi.Output.isInstance(stamp) ? stamp : a.urn;
}

/** A step's args: its fields as inputs (`triggers` excepted), plus `after` for a step that follows others. */
export type StepArgs<S extends StepDeclaration> = Omit<ArgsOf<S["fields"]>, "triggers"> &
  (S["follows"] extends true
    ? {
        /**
         * Steps (or values) this one follows: it waits for the resources and re-runs when any
         * followed value changes (a step by its runStamp, another resource by its URN). @default []
         */
        after?: pulumi.Input<unknown>[];
      }
    : unknown);

/** A step component's output properties: the declared outputs and `runStamp`. */
export type StepOutputs<S extends StepDeclaration> = {
  readonly [K in keyof OutputsOf<S>]: pulumi.Output<OutputsOf<S>[K]>;
} & RunStamped;

/**
 * Where a step's state was before this shape, so existing stacks keep it (aliases, not a
 * replacement): `component`, the component's former type (its child was already `${name}-run`);
 * `resource`, the former type of a step that was one dynamic resource named `name`.
 */
export type FormerType = { component: string } | { resource: string };

export interface DefineStepOptions {
  /** The step's implementation module: `new URL("./implementation.ts", import.meta.url)`. */
  implementation: URL;
  /** `pulumi destroy` calls the module's `destroy` (ts-module-provider.ts). @default false */
  undoes?: boolean;
  /** Inputs the child stores that must stay secret in the state whatever the engine infers. */
  secretOutputs?: string[];
  /** The type the step's state had before, when it differs (see FormerType). */
  was?: FormerType;
}

class StepRun extends pulumi.dynamic.Resource {}

function dependsOnList(d: pulumi.ComponentResourceOptions["dependsOn"]): pulumi.Input<pulumi.Resource>[] {
  if (d === undefined) return [];
  if (Array.isArray(d)) return d;
  if (pulumi.Resource.isInstance(d)) return [d];
  throw new Error("a step's dependsOn must be a resource or a list of resources");
}

/** The aliases of the component and of its child that keep an older stack's URNs. */
function formerUrns(name: string, parent: pulumi.Resource | undefined, was: FormerType | undefined) {
  if (was === undefined) return { component: [], run: [] };
  if ("resource" in was) return { component: [], run: [pulumi.createUrn(name, was.resource, parent)] };
  return {
    component: [{ type: was.component }],
    run: [pulumi.createUrn(`${name}-run`, STEP_RUN_TYPE, pulumi.createUrn(name, was.component, parent))],
  };
}

/** The component class of a declared step (see the file's comment), and its provider (`provider(testDeps?)`). */
export function defineStep<S extends StepDeclaration>(step: S, o: DefineStepOptions) {
  const modulePath = fileURLToPath(o.implementation);
  const provider = <D = never>(testDeps?: D): pulumi.dynamic.ResourceProvider =>
    tsModuleProvider(modulePath, testDeps, { undoes: o.undoes });
  const keys = [...step.outputKeys, "runStamp"];
  class Step extends pulumi.ComponentResource {
    static readonly provider = provider;
    static readonly step = step;

    constructor(name: string, args: StepArgs<S>, opts: pulumi.ComponentResourceOptions = {}) {
      const former = formerUrns(name, opts.parent, o.was);
      super(
        STEP_TYPE_PREFIX + step.type,
        name,
        {},
        { ...opts, aliases: [...(opts.aliases ?? []), ...former.component] },
      );
      const { after = [], ...fields } = args as { after?: pulumi.Input<unknown>[] };
      const inputs = step.follows ? { ...fields, triggers: after.map(triggerOf) } : fields;
      // Placeholders make the engine expose the outputs; an output that echoes an input (same
      // name) keeps its input, or the blank would replace what was given.
      const placeholders = Object.fromEntries(keys.filter((k) => !(k in step.fields)).map((k) => [k, undefined]));
      const run = new StepRun(
        provider(),
        `${name}-run`,
        { ...resourceInputs(step.fields, inputs as ArgsOf<S["fields"]>), ...placeholders },
        {
          parent: this,
          dependsOn: [
            ...dependsOnList(opts.dependsOn),
            ...after.filter((a): a is pulumi.Resource => pulumi.Resource.isInstance(a)),
          ],
          additionalSecretOutputs: o.secretOutputs,
          aliases: former.run,
        },
      );
      const outputs = Object.fromEntries(keys.map((k) => [k, (run as unknown as Record<string, unknown>)[k]]));
      Object.assign(this, outputs);
      this.registerOutputs(outputs);
    }
  }
  return Step as unknown as {
    new (
      name: string,
      args: StepArgs<S>,
      opts?: pulumi.ComponentResourceOptions,
    ): pulumi.ComponentResource & StepOutputs<S>;
    readonly provider: typeof provider;
    readonly step: S;
  };
}
