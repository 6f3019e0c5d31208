/**
 * The last good JWK set of each JWKS URL the trust file names (docs/trust.md, "Keys from a
 * JWKS URL"). A fetch that succeeds replaces it (and bumps `generation` when the keys differ,
 * so the caller knows to judge stored specs again); one that fails is reported and the last
 * good set is answered, so a key server's outage changes nothing. With no set yet (the first
 * fetch, at start or when a URL first appears), a failure is an error: the start stops, and a
 * reload keeps the last good trust roots.
 */
import { fetchJwks, type JwksFetchOptions } from "./jwks-fetch.js";

/** Bytes a JWK set may have: a few dozen keys. */
export const JWKS_MAX_BYTES = 64 * 1024;
export const JWKS_TIMEOUT_MS = 5000;

export class JwksUrlCache {
  private readonly last = new Map<string, { text: string; value: unknown }>();
  /** Counts the changes of any URL's keys. */
  generation = 0;

  constructor(
    private readonly opts: Partial<JwksFetchOptions> & { onFailure: (url: string, err: Error, keptLastGood: boolean) => void },
  ) {}

  readonly get = async (url: string): Promise<unknown> => {
    try {
      const value = await fetchJwks(url, { maxBytes: JWKS_MAX_BYTES, timeoutMs: JWKS_TIMEOUT_MS, ...this.opts });
      const text = JSON.stringify(value);
      const before = this.last.get(url);
      if (before === undefined || before.text !== text) {
        if (before !== undefined) this.generation++;
        this.last.set(url, { text, value });
      }
      return value;
    } catch (e) {
      const kept = this.last.get(url);
      this.opts.onFailure(url, e as Error, kept !== undefined);
      if (kept === undefined) throw e;
      return kept.value;
    }
  };
}
