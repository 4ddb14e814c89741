/**
 * `--repeat N` over a list of measuring steps: run 1 is every step once, run 2 every step again,
 * and so on (A B A B …, never all of one first), so a slow drift of the machine (another job, a
 * warming cache, an AOF growing) spreads over every measurement instead of landing on one. Each
 * step's rows are recorded with its run and when it ran; the rows the run reports are their
 * medians with min–max (run-spread.ts), and `raw/runs.json` keeps every run's own rows and the
 * order the steps ran in, so nothing measured is lost.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProgressStep } from "../../core/util/progress.js";
import type { ResultRow } from "./result-row.js";
import { aggregateRuns } from "./run-spread.js";

/** raw/runs.json: the order the steps ran in and each one's own rows. */
export const RUNS_FILE = "runs.json";

export interface StepRecord {
  run: number;
  /** The step's title without the run prefix. */
  step: string;
  startedAt: string;
  finishedAt?: string;
  rows: ResultRow[];
}

export interface RunsRecord {
  repeat: number;
  /** Every step in the order it ran, with its rows. */
  steps: StepRecord[];
}

export class RepeatedRuns {
  private readonly records: StepRecord[] = [];

  constructor(readonly count: number) {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new RangeError(`repeat must be a whole number ≥ 1 (got ${count})`);
  }

  /** The title of run `run`'s step: `Run 2/3: <title>` (the title alone for one run). */
  title(run: number, title: string): string {
    return this.count === 1 ? title : `Run ${run}/${this.count}: ${title}`;
  }

  /**
   * The steps of every run, run 1's first, each recorded as it starts and ends; `stepsOf(run)`
   * gives run `run`'s steps (their rows go to {@link add} while they run).
   */
  steps(stepsOf: (run: number) => ProgressStep[]): ProgressStep[] {
    return Array.from({ length: this.count }, (_, i) => i + 1).flatMap((run) =>
      stepsOf(run).map((s) => ({
        title: this.title(run, s.title),
        run: async (update: (line: string) => void) => {
          const record: StepRecord = { run, step: s.title, startedAt: new Date().toISOString(), rows: [] };
          this.records.push(record);
          await s.run(update);
          record.finishedAt = new Date().toISOString();
        },
      })),
    );
  }

  /** Rows measured by the step running now. */
  add(rows: readonly ResultRow[]): void {
    const current = this.records.at(-1);
    if (current === undefined || current.finishedAt !== undefined)
      throw new Error("RepeatedRuns.add: no step is running");
    current.rows.push(...rows);
  }

  /** Runs `measure` as run `run`'s step `step` (no progress display), recording it like {@link steps}. */
  async measure(run: number, step: string, measure: () => Promise<readonly ResultRow[]>): Promise<void> {
    const [recorded] = this.steps((r) =>
      r === run ? [{ title: step, run: async () => this.add(await measure()) }] : [],
    );
    await recorded?.run(() => undefined);
  }

  /**
   * The requests the same step's final runs of the previous run ended with, per test (lower case),
   * for RunWorkloadOptions.startRequests (a test's first row: the step's own, before any read rows
   * it added); empty for run 1.
   */
  previousRequests(run: number, step: string): Record<string, number> {
    const before = this.records.find((r) => r.run === run - 1 && r.step === step);
    return Object.fromEntries([...(before?.rows ?? [])].reverse().map((r) => [r.test.toLowerCase(), r.requests]));
  }

  /** Each run's rows, in the order they were measured. */
  perRun(): ResultRow[][] {
    return Array.from({ length: this.count }, (_, i) =>
      this.records.filter((r) => r.run === i + 1).flatMap((r) => r.rows),
    ).filter((r) => r.length > 0);
  }

  /** One row per measurement: the medians of its runs with their min–max. */
  rows(): ResultRow[] {
    return aggregateRuns(this.perRun());
  }

  record(): RunsRecord {
    return { repeat: this.count, steps: this.records.map((r) => ({ ...r, rows: [...r.rows] })) };
  }
}

/** Writes `<rawDir>/runs.json` (RUNS_FILE). */
export function writeRunsFile(rawDir: string, runs: RepeatedRuns): void {
  writeFileSync(join(rawDir, RUNS_FILE), `${JSON.stringify(runs.record(), null, 2)}\n`);
}
