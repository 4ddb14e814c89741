/**
 * The one dynamic-provider shell: it runs a TypeScript implementation module.
 *
 * Pulumi serializes a dynamic provider with its closure serializer into the state (every
 * resource's `__provider`) and runs it later in a separate plain-`node` process
 * (`@pulumi/pulumi/cmd/dynamic-provider`, which evaluates the text with require-from-string) that
 * cannot import our `.ts` files. So the provider captures only the implementation module's path
 * RELATIVE to the project root, and on each call finds the project (see {@link findProjectRoot}),
 * loads tsx's ESM API from the project's own node_modules and imports the module in one tsx
 * namespace per process (`register({ namespace }).import`), then calls its `check` / `create` /
 * `diff` / `update` (see DynamicImplModule; `dynamicProtocol` builds them). No absolute path reaches the state, so a
 * stack created from one checkout (CI) is updated and destroyed from another (a laptop) with that
 * checkout's code. Secrets reach the implementation only as resource inputs, never through the
 * serialized provider text.
 *
 * Why tsx's ESM API and not its CommonJS `require`: the project is ESM ("type": "module") and
 * @kubernetes/client-node is ESM-only, so a CommonJS load of the implementations would depend on
 * Node's require(esm) (and break on any top-level await); tsx's ESM loader loads them as what they are.
 */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type * as pulumi from "@pulumi/pulumi";
import type { DynamicImplModule } from "./protocol.js";

type Props = Record<string, unknown>;
/** A tsx namespace: its own loader hook, whose imports share one module cache. */
interface TsNamespace {
  import: (specifier: string, parentURL: string) => Promise<unknown>;
}
/** The namespace the provider processes load the step modules in (and its key on globalThis). */
const TSX_NAMESPACE = "valkey-on-eks-steps";

/** The project root, as this file sees it (components/steps/kit/ → ../../..). */
export const PROJECT_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Environment variable naming the project root when neither the working directory nor the provider host is inside it.
 */
export const PROJECT_ROOT_ENV = "VALKEY_ON_EKS_ROOT";

/** `modulePath` (absolute) relative to the project root, with `/` separators: what the provider serializes. */
export function projectRelative(modulePath: string, root: string = PROJECT_ROOT): string {
  const rel = relative(root, modulePath);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel))
    throw new Error(`dynamic provider module ${modulePath} is not inside the project ${root}`);
  return rel.split(sep).join("/");
}

/**
 * The directory of the valkey-on-eks checkout a dynamic provider runs in: the first anchor from
 * which walking up reaches a directory holding `relModule`. The anchors, in order: `$VALKEY_ON_EKS_ROOT`;
 * the working directory (the Pulumi CLI starts the provider host in the program's directory,
 * `stacks/`: pkg/engine/project.go getPwdMain, pkg/resource/plugin/provider_plugin.go `ctx.Pwd`);
 * the provider host script (`node_modules/@pulumi/pulumi/cmd/dynamic-provider` of the project's
 * own SDK, which is how an Automation API workspace outside the checkout still finds it).
 *
 * Self-contained (builtins through `process.getBuiltinModule`): the closure serializer copies it
 * into the provider text.
 */
export function findProjectRoot(relModule: string, anchors: ReadonlyArray<string | undefined>): string | undefined {
  const path = process.getBuiltinModule("node:path");
  const fs = process.getBuiltinModule("node:fs");
  for (const anchor of anchors) {
    if (anchor === undefined || anchor === "") continue;
    let dir = path.resolve(anchor);
    for (;;) {
      if (fs.existsSync(path.join(dir, relModule))) return dir;
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return undefined;
}

/**
 * The provider for the implementation module at `modulePath` (absolute path to a `.ts` file inside
 * the project). `delete` does nothing: what these resources did (a formed cluster, a passed check,
 * read results) is not undone; with `options.undoes` it calls the module's `destroy(id, props)`
 * (volume-release/: destroy waits for the volumes).
 *
 * An undoing provider's `delete` runs the provider text stored with the resource's last outputs,
 * not the program's: its `diff` therefore also reports a change when the stored text differs from
 * the program's (`olds.__provider`), so one `pulumi up` rewrites the state of a stack created by
 * an older shell (e.g. one that stored absolute paths) before a `destroy` needs it. The update it
 * causes re-records the same inputs (VolumeRelease does nothing on update).
 *
 * `testDeps` is for tests that call the provider in-process: it is passed to the module's
 * `create` / `update` as their last argument (fakes for the outside world). A program never
 * passes it, so its provider's closure holds the relative path and nothing else.
 */
export function tsModuleProvider<D = never>(
  modulePath: string,
  testDeps?: D,
  options: { undoes?: boolean } = {},
): pulumi.dynamic.ResourceProvider {
  const relModule = projectRelative(modulePath);
  const locate = findProjectRoot;
  const rootEnv = PROJECT_ROOT_ENV;
  const namespaceKey = TSX_NAMESPACE;
  const load = async (): Promise<DynamicImplModule<D>> => {
    const root = locate(relModule, [process.env[rootEnv], process.cwd(), process.argv[1]]);
    if (root === undefined) {
      throw new Error(
        `cannot find ${relModule} above ${process.cwd()} or ${String(process.argv[1])}: run Pulumi from a valkey-on-eks checkout (or set ${rootEnv} to one)`,
      );
    }
    const path = process.getBuiltinModule("node:path");
    const url = process.getBuiltinModule("node:url");
    const parent = url.pathToFileURL(path.join(root, "package.json")).href;
    // A real import() that neither the closure serializer nor a test runner's transform rewrites
    // (vitest turns `import()` into a helper that cannot be serialized), resolved by Node's own
    // ESM loader relative to `filename`, i.e. from the project's node_modules.
    const vm = process.getBuiltinModule("node:vm");
    const importer = vm.compileFunction("return import(specifier)", ["specifier"], {
      filename: path.join(root, "package.json"),
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }) as (specifier: string) => Promise<{ register: (o: { namespace: string }) => TsNamespace }>;
    // One tsx namespace per process, kept on globalThis (the closure serializer copies no state): every call and
    // every step module shares its hook and its module cache. tsImport registers a new namespace, i.e. one more
    // loader hook and a fresh load of the whole module graph, on every call: the e2e byo stack's provider processes
    // spent 191 of 289 CPU-seconds there, 1.5 to 1.8 cores for seconds at each call.
    const shared = globalThis as unknown as Record<string, Promise<TsNamespace> | undefined>;
    shared[namespaceKey] ??= importer("tsx/esm/api").then((api) => api.register({ namespace: namespaceKey }));
    return (await (
      await shared[namespaceKey]
    ).import(url.pathToFileURL(path.join(root, relModule)).href, parent)) as DynamicImplModule<D>;
  };
  // Chosen before the provider is built, so only the chosen functions are serialized.
  const undo = async (id: string, props: Props): Promise<void> => {
    await (await load()).destroy?.(id, props);
  };
  const diff = async (id: string, olds: Props, news: Props) => (await load()).diff(id, olds, news);
  const diffStoringProvider = async (id: string, olds: Props, news: Props) => {
    const result = (await load()).diff(id, olds, news);
    return olds.__provider !== undefined && olds.__provider !== news.__provider ? { ...result, changes: true } : result;
  };
  const provider = {
    // A module without `check` (not built by dynamicProtocol) passes the new inputs as they are.
    check: async (olds: Props, news: Props) => (await load()).check?.(olds, news) ?? { inputs: news, failures: [] },
    create: async (inputs: Props) => (await load()).create(inputs),
    diff: options.undoes === true ? diffStoringProvider : diff,
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
