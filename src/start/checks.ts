/**
 * The worker pools that check capability schemas and payloads off the event loop.
 */
import type { SchemaChecks } from "../domain/spec/validation.js";
import { SchemaPool } from "../adapters/workers/schema-pool.js";
import { PooledSchemaChecks } from "../service/registration/schema-checks.js";
import { PayloadCheckPool } from "../adapters/workers/payload-check-pool.js";
import { PooledPayloadChecks, type PayloadChecks } from "../service/queries/payload-checks.js";
import { untilAborted, type StartContext } from "./context.js";

/** The schema checks, and a promise that resolves once a worker thread is ready to compile. */
export type SchemaChecksStep = { readonly checker: SchemaChecks; readonly warmed: Promise<void> };

/**
 * Capability schemas are compiled by worker threads. First on the teardown stack, so last
 * closed: registrations still in flight while the endpoints drain get their verdicts. A
 * worker starts loading at once, alongside the connection and the view.
 */
export function startSchemaChecks(ctx: StartContext): SchemaChecksStep {
  const { config, metrics } = ctx;
  const log = ctx.root.child({ component: "schema-workers" });
  const pool = new SchemaPool({
    workers: config.schemaWorkers,
    queue: config.schemaCheckQueue,
    timeoutMs: config.schemaCheckTimeoutMs,
    onWorkerLost: (reason, err) => {
      metrics.schemaWorkersLost.inc({ reason });
      if (reason === "boot") log.error({ err }, "schema check workers cannot start: registrations get 503 until one does");
      else log.warn({ err, reason }, "a schema check worker was stopped and will be replaced; the schema it compiled was refused");
    },
  });
  ctx.teardown.defer("stopping the schema check workers", () => pool.close());
  const warmed = pool.warm();
  warmed.catch(() => undefined); // awaited by awaitSchemaWorkers; a start that fails before must not leave it unhandled
  return { checker: new PooledSchemaChecks(pool), warmed };
}

/**
 * Payloads (the `check` op) are validated by worker threads of their own, with a time budget
 * and a bounded queue: a hostile check costs a worker its budget, never the event loop. Next
 * to the schema checks on the teardown stack, for the same reason. No worker is loaded until
 * the first check.
 */
export function startPayloadChecks(ctx: StartContext): PayloadChecks {
  const { config, metrics } = ctx;
  const log = ctx.root.child({ component: "payload-check-workers" });
  const pool = new PayloadCheckPool({
    workers: config.payloadCheckWorkers,
    queue: config.payloadCheckQueue,
    timeoutMs: config.payloadCheckTimeoutMs,
    compileTimeoutMs: config.schemaCheckTimeoutMs,
    onWorkerLost: (reason, err) => {
      metrics.payloadCheckWorkersLost.inc({ reason });
      if (reason === "boot") log.error({ err }, "payload check workers cannot start: checks get 503 until one does");
      else log.warn({ err, reason }, "a payload check worker was stopped and will be replaced; the check it ran was refused");
    },
  });
  ctx.teardown.defer("stopping the payload check workers", () => pool.close());
  return new PooledPayloadChecks(pool);
}

/** The endpoints open once a schema worker is ready, so no registration waits for one to load. */
export async function awaitSchemaWorkers(ctx: StartContext, { warmed }: SchemaChecksStep): Promise<void> {
  await untilAborted(warmed, ctx.signal);
}
