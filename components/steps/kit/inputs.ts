/**
 * A post-deploy step's inputs, declared once. A step lists its fields, each a zod schema with a
 * role; everything else comes from that list:
 *
 *  - `ArgsOf<F>`: the component's args, every field a `pulumi.Input<...>` (fields whose schema
 *    accepts undefined, optional or defaulted, may be left out);
 *  - `Parsed<F>`: the typed inputs the implementation works on;
 *  - `parserOf(F)`: the dynamic provider's parser (errors name the key, never the value);
 *  - `rerunKeys(F)` / `secretKeys(F)`: the diff keys and the keys never echoed into outputs;
 *  - `resourceInputs(F, args)` (resource-inputs.ts, the components' side): the dynamic
 *    resource's inputs from the component's args (defaults filled in, secrets wrapped).
 *
 * Only types come from @pulumi/pulumi here: the implementations load this module in the
 * dynamic-provider process.
 *
 * Roles: `rerun` (a change re-runs the step), `setting` (read, echoed, re-runs nothing: bounds
 * and poll intervals), `secret` (read, never echoed, re-runs nothing: a rotated token re-runs
 * nothing).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";

export type FieldRole = "rerun" | "setting" | "secret";

export interface Field<S extends z.ZodType = z.ZodType> {
  role: FieldRole;
  schema: S;
}

export type Fields = Record<string, Field>;

/** A change of this input re-runs the step. */
export const rerun = <S extends z.ZodType>(schema: S): Field<S> => ({ role: "rerun", schema });
/** Read and echoed into the outputs; a change re-runs nothing. */
export const setting = <S extends z.ZodType>(schema: S): Field<S> => ({ role: "setting", schema });
/** Made secret by the component, never echoed into outputs; a change re-runs nothing. */
export const secret = <S extends z.ZodType>(schema: S): Field<S> => ({ role: "secret", schema });
/** The same field with another role (a step that reads a shared field differently). */
export const withRole = <S extends z.ZodType>(f: Field<S>, role: FieldRole): Field<S> => ({ role, schema: f.schema });
/**
 * The same fields with every `rerun` one read as a `setting` (secrets stay secret): for a step that only a key of its
 * own re-runs.
 */
export const asSettings = <F extends Fields>(fields: F): { [K in keyof F]: Field<F[K]["schema"]> } =>
  Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.role === "rerun" ? withRole(f, "setting") : f])) as {
    [K in keyof F]: Field<F[K]["schema"]>;
  };

// --- field schemas whose messages name what is wrong, never the value ---

export const nonEmptyString = () => {
  const error = "must be a non-empty string";
  return z.string({ error }).min(1, { error });
};

export const wholeNumber = (min = 0) => {
  const error = `must be a whole number ≥ ${min}`;
  return z.number({ error }).int({ error }).min(min, { error });
};

export const oneOf = <const T extends readonly string[]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(", ")}` });

export const anObject = <T extends object>() =>
  z.custom<T>((v) => typeof v === "object" && v !== null && !Array.isArray(v), { error: "must be an object" });

// --- what the list of fields gives ---

type In<F extends Field> = z.input<F["schema"]>;
type Out<F extends Field> = z.output<F["schema"]>;
type OptionalKeys<F extends Fields> = { [K in keyof F]: undefined extends In<F[K]> ? K : never }[keyof F];
type RequiredKeys<F extends Fields> = Exclude<keyof F, OptionalKeys<F>>;

/** The component's args: each field a pulumi.Input; optional or defaulted fields may be left out. */
export type ArgsOf<F extends Fields> = { [K in RequiredKeys<F>]: pulumi.Input<In<F[K]>> } & {
  [K in OptionalKeys<F>]?: pulumi.Input<Exclude<In<F[K]>, undefined>>;
};

type OptionalOutKeys<F extends Fields> = { [K in keyof F]: undefined extends Out<F[K]> ? K : never }[keyof F];

/** The implementation's typed inputs (an absent optional field is `undefined` or left out). */
export type Parsed<F extends Fields> = { [K in Exclude<keyof F, OptionalOutKeys<F>>]: Out<F[K]> } & {
  [K in OptionalOutKeys<F>]?: Out<F[K]>;
};

const acceptsUndefined = (f: Field): boolean => f.schema.safeParse(undefined).success;

/** The provider's parser: typed inputs from the engine's untyped ones. */
export function parserOf<F extends Fields>(fields: F): (p: Record<string, unknown>) => Parsed<F> {
  const schema = z.object(Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.schema])));
  return (p) => {
    // An optional input the engine stored as null or "" is absent (as it always was).
    const normal = Object.fromEntries(
      Object.entries(p).map(([k, v]) => [
        k,
        (v === null || v === "") && fields[k] !== undefined && acceptsUndefined(fields[k]) ? undefined : v,
      ]),
    );
    const r = schema.safeParse(normal);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new Error(`input '${issue?.path.map(String).join(".") ?? "?"}' ${issue?.message ?? "is invalid"}`);
    }
    return r.data as Parsed<F>;
  };
}

/** Keys whose change re-runs the step, in declaration order. */
export const rerunKeys = (fields: Fields): string[] => Object.keys(fields).filter((k) => fields[k]?.role === "rerun");
/** Keys never echoed into outputs. */
export const secretKeys = (fields: Fields): string[] => Object.keys(fields).filter((k) => fields[k]?.role === "secret");
