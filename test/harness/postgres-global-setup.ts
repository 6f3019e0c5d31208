/**
 * Vitest global setup: one private PostgreSQL for the whole run (initdb into a temp folder, a
 * free port), shared by every test file that needs one, so no test assumes a server on 5432.
 * PG_TEST_URL points the suite at an existing server instead, and nothing is started.
 *
 * Each project that lists this file runs it, but the server is started once per run: the
 * first project's setup starts it, each setup takes a reference, and the last teardown stops
 * it. Setups run in vitest's main process, so a global holds the one server between them.
 */
import type { TestProject } from "vitest/node";
import { canStartPostgres, NO_POSTGRES, startPostgres, type PostgresInstance } from "./postgres.js";

type Shared = { users: number; server: Promise<PostgresInstance> };
const KEY = Symbol.for("agent-registry.test.shared-postgres");
const holder = globalThis as unknown as Record<symbol, Shared | undefined>;

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.PG_TEST_URL) {
    project.provide("pgTestUrl", process.env.PG_TEST_URL);
    project.provide("pgTestProblem", "");
    return undefined;
  }
  if (!canStartPostgres()) {
    // Not thrown: the tests that need PostgreSQL fail with this, the others still run.
    project.provide("pgTestUrl", "");
    project.provide("pgTestProblem", NO_POSTGRES);
    return undefined;
  }
  const shared = (holder[KEY] ??= { users: 0, server: startPostgres() });
  shared.users += 1;
  let server: PostgresInstance;
  try {
    server = await shared.server;
  } catch (err) {
    project.provide("pgTestUrl", "");
    project.provide("pgTestProblem", `the run's PostgreSQL did not start: ${(err as Error).message}`);
    return undefined;
  }
  project.provide("pgTestUrl", server.url);
  project.provide("pgTestProblem", "");
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    holder[KEY] = undefined;
    await server.stop();
  };
}
