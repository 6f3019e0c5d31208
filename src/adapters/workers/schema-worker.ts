/**
 * Worker thread entry: compiles capability schemas (domain/spec/schema-compiler.ts) sent by
 * the service's pool (schema-pool.ts) as JSON text, and answers the verdict with the
 * milliseconds it took, which the per-type spec validation budget charges.
 */
import { SchemaCompiler, type SchemaVerdict } from "../../domain/spec/schema-compiler.js";
import { serveJobs } from "./worker-pool.js";

export type CompiledSchema = { verdict: SchemaVerdict; ms: number };

const compiler = new SchemaCompiler();

serveJobs((text: string): CompiledSchema => {
  const started = performance.now();
  const verdict = compiler.compile(JSON.parse(text) as object);
  return { verdict, ms: performance.now() - started };
});
