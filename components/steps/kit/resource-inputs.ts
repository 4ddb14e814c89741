/**
 * The components' side of a step's fields (inputs.ts): the dynamic resource's inputs from the
 * component's args.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ArgsOf, Fields } from "./inputs.js";

/** The dynamic resource's inputs from the component's args: defaults filled in, secrets wrapped. */
export function resourceInputs<F extends Fields>(fields: F, args: ArgsOf<F>): Record<keyof F, unknown> {
  const given = args as Record<string, unknown>;
  const entries = Object.entries(fields).map(([k, f]): [string, unknown] => {
    let v = given[k];
    if (v === undefined) {
      const d = f.schema.safeParse(undefined);
      if (d.success) v = d.data;
    }
    return [k, f.role === "secret" && v !== undefined ? pulumi.secret(v) : v];
  });
  return Object.fromEntries(entries) as Record<keyof F, unknown>;
}
