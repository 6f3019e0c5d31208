/**
 * The registry file (REGISTRY_FILE): read and checked before anything listens, applied before
 * the endpoints open, then watched.
 */
import { readText, watchFile } from "../adapters/file/watched-file.js";
import { StaticRegistry, parseRegistryFile, type LoadedRegistryFile } from "../service/registration/static-registry.js";
import type { StartContext, UseCases } from "./context.js";

/** The registry file as read and checked at start, before anything listens; null without one. */
export type StartRegistryFile = { path: string; text: string; file: LoadedRegistryFile } | null;

/**
 * Reads and checks the registry file first of all: a broken file stops the start, with the
 * file's own message, before the ops server or any endpoint has answered anyone.
 */
export async function readRegistryFile(ctx: StartContext): Promise<StartRegistryFile> {
  const path = ctx.config.registryFile;
  if (!path) return null;
  const text = await readText(path);
  return { path, text, file: parseRegistryFile(path, text, registryFileOptions(ctx)) };
}

// A v2 file's entries name no subject of their own: with a subject policy they take the policy's.
const registryFileOptions = (ctx: StartContext) => ({ subjectPolicy: ctx.config.subjectPolicy });

/** Applies the checked file before the endpoints open, so a replica's first answer already includes it; then watches it. */
export async function applyRegistryFile(ctx: StartContext, { registrar, schemas, fileWarnings }: UseCases, loaded: StartRegistryFile): Promise<void> {
  if (!loaded) return;
  const { path, text, file } = loaded;
  const statics = new StaticRegistry({
    registrar,
    view: ctx.view,
    log: ctx.root.child({ component: "registry-file" }),
    putSchema: (s) => schemas.put(s.name, { version: s.version, schema: s.schema, description: s.description }),
    onError: () => ctx.metrics.registryFileErrors.inc(),
    fileWarnings,
  });
  // What only applying can refuse (a schema a worker will not compile) stops the start too.
  const applied = await statics.applyFile(file);
  ctx.log.info({ path, kind: file.kind, schemas: file.schemas.length, agents: applied.registered.length, warnings: file.warnings.length }, "registry file loaded");
  const options = registryFileOptions(ctx);
  const watch = watchFile(path, (t, err) => void statics.reload(path, t, err, options), { initial: text });
  ctx.teardown.defer("closing the registry file watch", () => watch.close());
}
