import { defineConfig } from "vitest/config";

// Unit and integration tests run in parallel files; fault tests kill and restart servers,
// so they run one file at a time in a project of their own.
// The projects that reach PostgreSQL share one server per run (PG_TEST_URL, or a private one
// the global setup starts); unit tests never start it.
const sharedPostgres = ["test/harness/postgres-global-setup.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], globalSetup: sharedPostgres, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      {
        extends: true,
        test: { name: "fault", include: ["test/fault/**/*.test.ts"], globalSetup: sharedPostgres, fileParallelism: false, testTimeout: 120_000, sequence: { groupOrder: 2 } },
      },
      {
        // The liveness fault tests again under REGISTRY_LIVENESS=memory (heartbeats answered from
        // memory, suspect marks): every guarantee must hold in both modes. Replica processes
        // inherit the variable; in-process replicas read it through test/harness/registry.ts.
        extends: true,
        test: {
          name: "fault-memory",
          include: ["test/fault/**/*.test.ts"],
          // Those that set their mode themselves, or do not test liveness.
          exclude: ["test/fault/heartbeat-race.test.ts", "test/fault/fanout-loss.test.ts", "test/fault/audit-faults.test.ts", "test/fault/write-backlog.test.ts", "test/fault/bucket-full.test.ts", "test/fault/regions-supercluster.test.ts", "test/fault/regions-queries.test.ts", "test/fault/regions-three.test.ts", "test/fault/regions-readers.test.ts"],
          env: { REGISTRY_LIVENESS: "memory" },
          globalSetup: sharedPostgres,
          fileParallelism: false,
          testTimeout: 120_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
