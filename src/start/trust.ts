/**
 * The trust roots and the card signing key (docs/trust.md), read before anything listens.
 */
import { TrustRoots } from "../domain/trust/trust-roots.js";
import type { CardSigner } from "../domain/trust/card-signer.js";
import { loadCardSigningKey } from "../adapters/file/card-signing-key.js";
import { loadTrustFile } from "../adapters/file/trust-file.js";
import { JwksUrlCache } from "../adapters/http/jwks-url-cache.js";
import { readFile } from "node:fs/promises";
import type { StartContext } from "./context.js";

/** The trust roots read at start, and the cache their JWKS URLs are fetched through (trust-reload.ts refreshes it). */
export type StartTrust = { roots: TrustRoots; urls: JwksUrlCache };

/**
 * Reads the trust roots (REGISTRY_TRUST_FILE) before anything listens: a broken file, or a
 * JWKS URL that cannot be fetched, stops the start. No file: every tenant's mode is off.
 */
export async function readTrustRoots(ctx: StartContext): Promise<StartTrust> {
  const log = ctx.root.child({ component: "trust" });
  const ca = ctx.config.trustJwksCaFile === undefined ? undefined : await readFile(ctx.config.trustJwksCaFile, "utf8");
  if (ctx.config.trustJwksAllowPrivate) log.warn("REGISTRY_TRUST_JWKS_ALLOW_PRIVATE is set: JWKS URLs may reach loopback and private addresses (a test setting)");
  const urls = new JwksUrlCache({
    allowPrivate: ctx.config.trustJwksAllowPrivate,
    ...(ca !== undefined ? { ca } : {}),
    onFailure: (url, err, keptLastGood) => {
      ctx.metrics.trustJwksFetchErrors.inc();
      log.error({ err, url, kept_last_good: keptLastGood }, keptLastGood ? "JWKS URL not fetched; keeping its last good keys" : "JWKS URL not fetched");
    },
  });
  const path = ctx.config.trustFile;
  if (!path) return { roots: TrustRoots.none, urls };
  const roots = await loadTrustFile(path, urls.get);
  ctx.log.info({ trust_file: path, enabled: roots.enabled }, "trust roots loaded");
  return { roots, urls };
}

/** The key exported cards are signed with (REGISTRY_CARD_SIGNING_KEY), read before anything listens; none: cards go unsigned. */
export async function readCardSigner(ctx: StartContext): Promise<CardSigner | undefined> {
  const path = ctx.config.cardSigningKey;
  if (!path) return undefined;
  const signer = await loadCardSigningKey(path);
  ctx.log.info({ card_signing_key: path, kid: signer.kid, alg: signer.alg }, "exported cards are signed");
  return signer;
}
