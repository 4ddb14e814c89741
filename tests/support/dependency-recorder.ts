/**
 * A by-name view of the dependencies and parents the mock recorder (tests/support/pulumi-mocks.ts)
 * keeps for every registration. The engine deletes a resource before everything it depends on, so
 * "A depends on B" here is "B outlives A on destroy".
 */
import type { MockRecorder } from "./pulumi-mocks.js";

export interface DependencyRecorder {
  /** The logical names `name` was registered depending on; throws if it was never registered. */
  of(name: string): string[];
  /** The logical name of `name`'s parent ("" for none). */
  parentOf(name: string): string;
  /** Whether `name` depends on `dependency` (both logical names). */
  dependsOn(name: string, dependency: string): boolean;
  /** Forgets everything recorded so far (the recorder's reset). */
  reset(): void;
}

export function recordDependencies(mocks: MockRecorder): DependencyRecorder {
  const find = (name: string) => {
    const found = mocks.resources.filter((r) => r.name === name);
    if (found.length === 0)
      throw new Error(
        `no resource named ${name} was registered (have: ${mocks.resources.map((r) => r.name).join(", ")})`,
      );
    return found;
  };
  const of = (name: string) => [...new Set(find(name).flatMap((r) => r.dependencies))];
  return {
    of,
    parentOf: (name) => find(name)[0]?.parent ?? "",
    dependsOn: (name, dependency) => of(name).includes(dependency),
    reset: () => mocks.reset(),
  };
}
