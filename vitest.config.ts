import { defineConfig } from "vitest/config";

// Integration tests start real valkey-server processes; keep files in separate forks so a
// crashed test cannot leave another file's servers behind, and give them room to settle.
export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ["default", "./tests/support/closing-line-reporter.ts"],
  },
});
