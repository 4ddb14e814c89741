/** The steps a long local run shows as it goes (listr2 in the CLI, nothing in tests). */

/** The steps a progress display shows; `run` is awaited inside the display. */
export interface ProgressStep {
  title: string;
  run: (update: (line: string) => void) => Promise<void>;
}

/** Shows steps as they run (listr2 in the CLI, a plain logger in tests). */
export type ProgressRunner = (steps: ProgressStep[]) => Promise<void>;

/** Runs steps one after another without any display. */
export const silentProgress: ProgressRunner = async (steps) => {
  for (const s of steps) await s.run(() => undefined);
};
