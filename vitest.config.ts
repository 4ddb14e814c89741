import { defineConfig } from "vitest/config";
import LastFilesSequencer from "./tests/support/last-files-sequencer.js";

// Integration tests start real valkey-server processes; keep files in separate forks so a
// crashed test cannot leave another file's servers behind, and give them room to settle.
// Three projects: `unit` needs only Node and valkey-server, `e2e` needs the toolchain of
// .ci/toolchain (tests/e2e: the real Pulumi engine, kube-apiserver, kwok; tests/stacks/workflows.test.ts:
// actionlint), `pods` the local real cluster (tests/pods). `npm run test:unit` / `test:e2e` /
// `test:pods` pick one (`vitest run --project <name>`). unit and e2e run in a private TMPDIR,
// removed at the end (tests/support/private-tmp.ts); pods does not: the cluster it starts outlives
// the run.
export default defineConfig({
  test: {
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ["default", "./tests/support/closing-line-reporter.ts"],
    // kube:local's own test last: it stops the cluster the other pods files share.
    sequence: { sequencer: LastFilesSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["tests/**/*.test.ts"],
          exclude: ["tests/e2e/**", "tests/pods/**", "tests/stacks/workflows.test.ts"],
          globalSetup: ["tests/support/private-tmp.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["tests/e2e/**/*.test.ts", "tests/stacks/workflows.test.ts"],
          globalSetup: ["tests/support/private-tmp.ts"],
        },
      },
      // The local real cluster (apps/kube-local, docs/real-cluster.md): root and
      // `install.sh --real-cluster` (skipped with the reason otherwise); one file at a time, after
      // the other projects (`npm test` runs it as a second vitest run).
      {
        extends: true,
        test: {
          name: "pods",
          include: ["tests/pods/**/*.test.ts"],
          maxWorkers: 1,
          globalSetup: ["tests/pods/support/global-cluster.ts"],
        },
      },
    ],
  },
});
