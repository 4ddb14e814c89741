/**
 * A dynamic-provider shell that runs a TypeScript implementation module.
 *
 * Pulumi serializes a dynamic provider with its closure serializer and runs it later in a
 * separate plain-`node` process (`@pulumi/pulumi/cmd/dynamic-provider`) that cannot import our
 * `.ts` files. So the provider captures only two strings, the implementation module's absolute
 * path and the URL of tsx's ESM API, and on each call loads the module with tsx's
 * `tsImport(specifier, parentURL)` and calls its `create` / `diff` / `update`. Secrets reach the
 * implementation only as resource inputs, never through the serialized provider text.
 */
import type * as pulumi from "@pulumi/pulumi";

type Props = Record<string, unknown>;

/** What an implementation module loaded by the shell exports. */
export interface DynamicImplModule {
  create(inputs: Props): Promise<{ id: string; outs: Props }>;
  diff(id: string, olds: Props, news: Props): pulumi.dynamic.DiffResult;
  update(id: string, olds: Props, news: Props): Promise<{ outs: Props }>;
}

/**
 * The provider for the implementation module at `modulePath` (absolute path to a `.ts` file).
 * `delete` does nothing: what these resources did (a formed cluster, a passed check) is not undone.
 */
export function tsModuleProvider(modulePath: string): pulumi.dynamic.ResourceProvider {
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const load = async (): Promise<DynamicImplModule> => {
    // A real import() that neither the closure serializer nor a test runner's transform rewrites
    // (vitest turns `import()` into a helper that cannot be serialized), resolved by Node's own
    // ESM loader whatever script calls it. `process` is a global: nothing module-level is captured.
    const vm = process.getBuiltinModule("node:vm");
    const importer = vm.compileFunction("return import(specifier)", ["specifier"], {
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }) as (specifier: string) => Promise<{ tsImport: (specifier: string, parentURL: string) => Promise<unknown> }>;
    const { tsImport } = await importer(tsxApi);
    return (await tsImport(modulePath, tsxApi)) as DynamicImplModule;
  };
  return {
    create: async (inputs: Props) => (await load()).create(inputs),
    diff: async (id: string, olds: Props, news: Props) => (await load()).diff(id, olds, news),
    update: async (id: string, olds: Props, news: Props) => (await load()).update(id, olds, news),
    delete: () => Promise.resolve(),
  };
}
