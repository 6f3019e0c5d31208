/**
 * The trust roots and the card signing key (docs/trust.md), read before anything listens.
 */
import { TrustRoots } from "../domain/trust/trust-roots.js";
import type { CardSigner } from "../domain/trust/card-signer.js";
import { loadCardSigningKey } from "../adapters/file/card-signing-key.js";
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

/** The key exported cards are signed with (REGISTRY_CARD_SIGNING_KEY), read before anything listens; none: cards go unsigned. */
export async function readCardSigner(ctx: StartContext): Promise<CardSigner | undefined> {
  const path = ctx.config.cardSigningKey;
  if (!path) return undefined;
  const signer = await loadCardSigningKey(path);
  ctx.log.info({ card_signing_key: path, kid: signer.kid, alg: signer.alg }, "exported cards are signed");
  return signer;
}
