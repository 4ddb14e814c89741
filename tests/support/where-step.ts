/**
 * A dynamic-provider implementation module that reports WHERE it was loaded from: the kit's shell
 * (components/steps/kit/ts-module-provider.ts) imports it with tsx, in-process or in the
 * dynamic-provider process, exactly as it imports the real steps. `create` / `update` return
 * the module's URL and the process's working directory as outputs; `destroy` (an undoing
 * provider's delete) writes them as JSON to the file named by the `marker` input.
 */
import { writeFileSync } from "node:fs";

type Props = Record<string, unknown>;

// tsx loads the module under the provider's namespace (`?tsx-namespace=…`): the file URL is before it.
// How many times this process evaluated the module: a provider process loads each step module once.
const counter = globalThis as unknown as { whereStepEvaluations?: number };
counter.whereStepEvaluations = (counter.whereStepEvaluations ?? 0) + 1;
const evaluations = counter.whereStepEvaluations;
const here = (): Props => ({ module: import.meta.url.split("?")[0], cwd: process.cwd(), evaluations });

export function check(_olds: Props, news: Props): { inputs: Props; failures: [] } {
  return { inputs: news, failures: [] };
}

export function create(inputs: Props): Promise<{ id: string; outs: Props }> {
  return Promise.resolve({ id: "where", outs: { marker: inputs.marker, ...here() } });
}

export function diff(): { changes: boolean; replaces: string[] } {
  return { changes: false, replaces: [] };
}

export function update(_id: string, _olds: Props, news: Props): Promise<{ outs: Props }> {
  return Promise.resolve({ outs: { marker: news.marker, ...here() } });
}

export function destroy(_id: string, props: Props): Promise<void> {
  if (typeof props.marker === "string") writeFileSync(props.marker, JSON.stringify(here()));
  return Promise.resolve();
}
