/**
 * The one dynamic-provider shell: it runs a TypeScript implementation module.
 *
 * Pulumi serializes a dynamic provider with its closure serializer and runs it later in a
 * separate plain-`node` process (`@pulumi/pulumi/cmd/dynamic-provider`, which evaluates the text
 * with require-from-string) that cannot import our `.ts` files. So the provider captures only two
 * strings, the implementation module's absolute path and the URL of tsx's ESM API, and on each
 * call loads the module with tsx's `tsImport(specifier, parentURL)` and calls its `check` /
 * `create` / `diff` / `update` (see DynamicImplModule; `dynamicProtocol` builds them). Secrets reach the
 * implementation only as resource inputs, never through the serialized provider text.
 *
 * Why tsx's ESM API and not its CommonJS `require`: the project is ESM ("type": "module") and
 * @kubernetes/client-node is ESM-only, so a CommonJS load of the implementations would depend on
 * Node's require(esm) (and break on any top-level await); `tsImport` loads them as what they are.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { DynamicImplModule } from "./protocol.js";

type Props = Record<string, unknown>;

/**
 * The provider for the implementation module at `modulePath` (absolute path to a `.ts` file).
 * `delete` does nothing: what these resources did (a formed cluster, a passed check, read
 * results) is not undone; with `options.undoes` it calls the module's `destroy(id, props)`
 * (volume-release/: destroy waits for the volumes).
 *
 * `testDeps` is for tests that call the provider in-process: it is passed to the module's
 * `create` / `update` as their last argument (fakes for the outside world). A program never
 * passes it, so its provider's closure holds the two strings and nothing else.
 */
export function tsModuleProvider<D = never>(modulePath: string, testDeps?: D, options: { undoes?: boolean } = {}): pulumi.dynamic.ResourceProvider {
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const load = async (): Promise<DynamicImplModule<D>> => {
    // A real import() that neither the closure serializer nor a test runner's transform rewrites
    // (vitest turns `import()` into a helper that cannot be serialized), resolved by Node's own
    // ESM loader whatever script calls it. `process` is a global: nothing module-level is captured.
    const vm = process.getBuiltinModule("node:vm");
    const importer = vm.compileFunction("return import(specifier)", ["specifier"], {
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }) as (specifier: string) => Promise<{ tsImport: (specifier: string, parentURL: string) => Promise<unknown> }>;
    const { tsImport } = await importer(tsxApi);
    return (await tsImport(modulePath, tsxApi)) as DynamicImplModule<D>;
  };
  // Chosen before the provider is built, so only the chosen function is serialized.
  const undo = async (id: string, props: Props): Promise<void> => {
    await (await load()).destroy?.(id, props);
  };
  const provider = {
    // A module without `check` (not built by dynamicProtocol) passes the new inputs as they are.
    check: async (olds: Props, news: Props) => (await load()).check?.(olds, news) ?? { inputs: news, failures: [] },
    create: async (inputs: Props) => (await load()).create(inputs),
    diff: async (id: string, olds: Props, news: Props) => (await load()).diff(id, olds, news),
    update: async (id: string, olds: Props, news: Props) => (await load()).update(id, olds, news),
    delete: options.undoes === true ? undo : () => Promise.resolve(),
  };
  if (testDeps === undefined) return provider;
  // Separate functions, so that only a test's provider refers to `testDeps`.
  return {
    ...provider,
    create: async (inputs: Props) => (await load()).create(inputs, testDeps),
    update: async (id: string, olds: Props, news: Props) => (await load()).update(id, olds, news, testDeps),
  };
}
