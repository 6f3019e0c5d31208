/**
 * The trust roots (docs/trust.md), read before anything listens.
 */
import { TrustRoots } from "../domain/trust/trust-roots.js";
import { loadTrustFile } from "../adapters/file/trust-file.js";
import type { StartContext } from "./context.js";

/**
 * Reads the trust roots (REGISTRY_TRUST_FILE) before anything listens: a broken file stops the
 * start. No file: every tenant's mode is off.
 */
export async function readTrustRoots(ctx: StartContext): Promise<TrustRoots> {
  const path = ctx.config.trustFile;
  if (!path) return TrustRoots.none;
  const roots = await loadTrustFile(path);
  ctx.log.info({ trust_file: path, enabled: roots.enabled }, "trust roots loaded");
  return roots;
}
