import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files that must run after every other file of their project, in this order: kube:local's own test stops the
 * cluster the other pods files ran on (its `down` is the project's last step, not a second cold start).
 */
export const LAST_FILES = ["tests/pods/kube-local.test.ts"];

/** vitest's order (failed, then longest first; by size without results), with `LAST_FILES` moved to the end. */
export default class LastFilesSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => LAST_FILES.findIndex((l) => f.moduleId.endsWith(`/${l}`));
    return [
      ...sorted.filter((f) => rank(f) < 0),
      ...sorted.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b)),
    ];
  }
}
