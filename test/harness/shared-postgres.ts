/**
 * The run's shared PostgreSQL, as tests see it: PG_TEST_URL when set, otherwise the private
 * server postgres-global-setup.ts started once for the whole run. Each test file takes a
 * database of its own on it, so files never see each other's rows.
 */
import { inject } from "vitest";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The shared server's URL, or "" when the global setup could not start one. */
    pgTestUrl: string;
    /** Why there is no shared server ("" when there is one). */
    pgTestProblem: string;
  }
}

/** The shared server's URL; throws why there is none, so a test fails with it rather than skips. */
export function sharedPostgresUrl(): string {
  if (process.env.PG_TEST_URL) return process.env.PG_TEST_URL;
  const url = inject("pgTestUrl");
  if (!url) throw new Error(`no shared PostgreSQL for this run: ${inject("pgTestProblem") || "the global setup (test/harness/postgres-global-setup.ts) did not run for this project"}`);
  return url;
}

/** A fresh database `audit_<random>` on the run's shared server. */
export function withTestDatabase(): Promise<TestDatabase> {
  return createTestDatabase(sharedPostgresUrl());
}
