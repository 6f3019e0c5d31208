/**
 * The service's capability schema checks (the SchemaChecks port of domain/spec/validation.ts).
 * The cheap half runs where the request is handled: the limits walk, the JSON text, the
 * verdict cache. Compilation, up to a second for a spec of new schemas at the node limit, goes
 * to the worker pool (adapters/workers/schema-pool.ts), so queries never wait behind it
 * (issue 14, finding 9). A schema text already being compiled for another request is not sent
 * twice: ten replicas of a new type starting at once cost one compilation.
 *
 * The cheap half is not free once named refs are inlined: a 20 KB spec whose 512 schemas each
 * refer to one 60 KB stored schema is 30 MB of schema text to walk and serialize (0.15-0.35 s).
 * So it runs between turns of the loop, charged to the request (a WorkPacer), and a schema
 * object met again in one spec (the resolution gives one object per stored schema) is
 * prepared once.
 */
import { SchemaChecker, prepareSchema, type PreparedSchema, type SchemaVerdict } from "../../domain/spec/schema-check.js";
import type { SchemaChecks, WorkPacer } from "../../domain/spec/validation.js";
import { VerdictCache } from "../../domain/spec/verdict-cache.js";

/** One compilation's outcome; `transient` verdicts (a timeout, a crashed worker) are not cached. */
export type CompiledSchema = { verdict: SchemaVerdict; ms: number; transient?: boolean };

/**
 * Compiles schema texts off the event loop, one promise per text. Throws a RegistryError
 * (503) at once when it cannot take them all, so a spec is admitted whole or not at all.
 */
export interface SchemaCompilePool {
  compile(texts: readonly string[]): Array<Promise<CompiledSchema>>;
}

export class PooledSchemaChecks implements SchemaChecks {
  private readonly cache = new VerdictCache();
  private readonly inFlight = new Map<string, Promise<CompiledSchema>>();
  constructor(private readonly pool: SchemaCompilePool) {}

  async checkAll(schemas: readonly unknown[], pacer?: WorkPacer): Promise<{ verdicts: SchemaVerdict[]; ms: number }> {
    const verdicts: SchemaVerdict[] = schemas.map(() => null);
    const waiting: Array<Promise<unknown>> = [];
    const fresh = new Map<string, number[]>();
    // The cheap half's outcome by schema object, for this call only (nothing retained past it).
    const seen = new Map<object, PreparedSchema>();
    for (let i = 0; i < schemas.length; i++) {
      const turn = pacer?.next();
      if (turn) await turn;
      const prepared = prepareOnce(schemas[i], seen);
      if ("verdict" in prepared) {
        verdicts[i] = prepared.verdict;
        continue;
      }
      const cached = this.cache.get(prepared.text);
      if (cached !== undefined) {
        verdicts[i] = cached;
        continue;
      }
      const pending = this.inFlight.get(prepared.text);
      if (pending) {
        waiting.push(pending.then((r) => (verdicts[i] = r.verdict)));
        continue;
      }
      const at = fresh.get(prepared.text);
      if (at) at.push(i);
      else fresh.set(prepared.text, [i]);
    }
    let ms = 0;
    const texts = [...fresh.keys()];
    const compiled = texts.length > 0 ? this.pool.compile(texts) : [];
    texts.forEach((text, k) => {
      const one = compiled[k]!;
      this.inFlight.set(text, one);
      waiting.push(
        one
          .then((r) => {
            ms += r.ms;
            if (!r.transient) this.cache.set(text, r.verdict);
            for (const i of fresh.get(text)!) verdicts[i] = r.verdict;
          })
          .finally(() => this.inFlight.delete(text)),
      );
    });
    // Every compilation is awaited (and the in-flight map cleared) before a failure is thrown;
    // the wait is the workers' time, charged by the milliseconds they report, not the loop's.
    // Settled is observed before the pacer may throw, so no rejection goes unhandled.
    const all = Promise.allSettled(waiting);
    const settled = pacer ? await pacer.off(() => all) : await all;
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    return { verdicts, ms };
  }
}

/** prepareSchema, once per schema object of one spec: the resolution gives one object per stored schema. */
function prepareOnce(schema: unknown, seen: Map<object, PreparedSchema>): PreparedSchema {
  if (typeof schema !== "object" || schema === null) return prepareSchema(schema);
  let prepared = seen.get(schema);
  if (!prepared) seen.set(schema, (prepared = prepareSchema(schema)));
  return prepared;
}

/** Compiles on the caller's thread: unit tests, and anywhere no worker thread is wanted. */
export class InlineSchemaChecks implements SchemaChecks {
  constructor(private readonly checker = new SchemaChecker()) {}

  async checkAll(schemas: readonly unknown[]): Promise<{ verdicts: SchemaVerdict[]; ms: number }> {
    const started = performance.now();
    const verdicts = schemas.map((s) => this.checker.verdict(s));
    return { verdicts, ms: performance.now() - started };
  }
}
