/**
 * Records the dependencies each resource registration carries under Pulumi mocks (the mock
 * callbacks of tests/support/pulumi-mocks.ts do not receive them): wraps the mock monitor's
 * registerResource and keeps, per logical name, the URNs the SDK sent as `dependencies` (the
 * explicit dependsOn, with a component expanded to the custom resources under it, plus the
 * resources its inputs came from), and its parent. The engine deletes a resource before everything it depends
 * on, so "A depends on B" here is "B outlives A on destroy".
 *
 * Call `recordDependencies()` after installMocks() and before the components are built.
 */
import * as pulumi from "@pulumi/pulumi";

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getDependenciesList(): string[];
  getParent(): string;
}
type Monitor = { registerResource(req: RegisterRequest, callback: unknown): unknown };

export interface DependencyRecorder {
  /** The logical names (last URN segment) `name` was registered depending on; throws if it was never registered. */
  of(name: string): string[];
  /** The logical name of `name`'s parent ("" for none). */
  parentOf(name: string): string;
  /** Whether `name` depends on `dependency` (both logical names). */
  dependsOn(name: string, dependency: string): boolean;
  reset(): void;
}

const nameOfUrn = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

export function recordDependencies(): DependencyRecorder {
  const deps = new Map<string, string[]>();
  const parents = new Map<string, string>();
  const monitor = pulumi.runtime.getMonitor() as unknown as Monitor | undefined;
  if (monitor === undefined || typeof monitor.registerResource !== "function") throw new Error("recordDependencies: call installMocks() first (no mock monitor)");
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, callback) => {
    deps.set(req.getName(), req.getDependenciesList().map(nameOfUrn));
    parents.set(req.getName(), req.getParent() ? nameOfUrn(req.getParent()) : "");
    return register(req, callback);
  };
  const of = (name: string) => {
    const found = deps.get(name);
    if (found === undefined) throw new Error(`no resource named ${name} was registered (have: ${[...deps.keys()].join(", ")})`);
    return found;
  };
  return {
    of,
    parentOf: (name) => (of(name), parents.get(name) ?? ""),
    dependsOn: (name, dependency) => of(name).includes(dependency),
    reset: () => {
      deps.clear();
      parents.clear();
    },
  };
}
