/**
 * Starts a worker thread on a module next to the caller, the same way whether the service runs
 * built (dist/*.js: `npm start`, the image) or from source (.ts through tsx or vitest). From
 * source, node 20 does not give a worker thread the parent's tsx loader (`--import tsx` is not
 * applied to workers), so tsx-worker.mjs registers tsx in the worker and imports the .ts module.
 * tsx is a dev dependency: only development runs from source.
 */
import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/** `callerUrl` is the caller's import.meta.url; `name` the module's file name without extension. */
export function moduleWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!new URL(callerUrl).pathname.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  return new Worker(fileURLToPath(new URL("./tsx-worker.mjs", import.meta.url)), { ...options, argv: [...(options.argv ?? []), entry] });
}
