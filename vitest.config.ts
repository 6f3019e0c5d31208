import { defineConfig } from "vitest/config";

// Unit and integration tests run in parallel files; fault tests kill and restart servers,
// so they run one file at a time in a project of their own.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], maxWorkers: 2, sequence: { groupOrder: 1 } } },
      {
        extends: true,
        test: { name: "fault", include: ["test/fault/**/*.test.ts"], fileParallelism: false, testTimeout: 120_000, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
