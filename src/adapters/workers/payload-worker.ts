/**
 * Worker thread entry: checks payloads against capability schemas for the `check` op
 * (payload-check-pool.ts). A job carries the schema as JSON text, the key of the validator
 * compiled for it (kept here, so a schema is compiled once per worker, not per check), and the
 * request whose `payload` field is checked, parsed here rather than cloned on the event loop.
 * A schema this worker has not compiled yet is compiled in a `compile` step, bounded like a
 * registration's compilation; the check itself has REGISTRY_PAYLOAD_CHECK_TIMEOUT_MS.
 */
import { PayloadChecker } from "../../domain/spec/payload-check.js";
import type { ErrorIssue } from "../../protocol/errors.js";
import { COMPILE_PHASE, type PayloadCheckJob } from "../../service/queries/payload-checks.js";
import { serveJobs } from "./worker-pool.js";

const checker = new PayloadChecker();
const decoder = new TextDecoder();

serveJobs((job: PayloadCheckJob, phase): ErrorIssue[] => {
  const compiled = checker.isPrepared(job.schema);
  if (!compiled) phase(COMPILE_PHASE);
  const check = checker.prepare(job.schema);
  if (!compiled) phase();
  const request = JSON.parse(typeof job.request === "string" ? job.request : decoder.decode(job.request)) as { payload?: unknown };
  return check(request.payload, job.direction);
});
