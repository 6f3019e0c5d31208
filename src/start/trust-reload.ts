/**
 * Keeps the trust roots current without a restart (docs/trust.md, "When trust roots change"):
 * the trust file and the JWKS files it names are watched as the registry file is; a change is
 * read and checked, replaces the roots registration judges by, and every stored spec is judged
 * again. A file that no longer reads or checks is logged and counted, and the last good roots
 * stay. Stored specs are also judged once at start (the file may have changed while the
 * registry was down) and whenever a grant's `not_before` or `not_after` passes.
 */
import { watchFile, type WatchedFile } from "../adapters/file/watched-file.js";
import { readTrustFile, type TrustSource } from "../adapters/file/trust-file.js";
import { followBucketTrust } from "./trust-bucket.js";
import { nextGrantBoundary } from "../service/registration/trust-rejudge.js";
import type { StartContext, UseCases } from "./context.js";
import type { JwksUrlCache } from "../adapters/http/jwks-url-cache.js";

/** setTimeout holds at most about 24.8 days; a later boundary is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

export async function watchTrustRoots(ctx: StartContext, { trust, feed }: UseCases, urls: JwksUrlCache): Promise<void> {
  const log = ctx.root.child({ component: "trust" });
  const path = ctx.config.trustFile;
  let boundary: NodeJS.Timeout | null = null;
  let refresh: NodeJS.Timeout | null = null;
  let watches: WatchedFile[] = [];
  let closed = false;

  const rejudge = (reason: string): Promise<unknown> =>
    trust.rejudge.all(reason).then(scheduleBoundary, (err: unknown) => log.error({ err, reason }, "judging the stored specs again failed"));

  function scheduleBoundary(): void {
    if (boundary !== null) clearTimeout(boundary);
    boundary = null;
    const now = ctx.clock.now();
    const next = closed ? undefined : nextGrantBoundary(trust.gate.roots, now);
    if (next === undefined) return;
    const wait = Math.min(next - now, MAX_TIMER_MS);
    boundary = setTimeout(() => void (ctx.clock.now() >= next ? rejudge("a grant's validity began or ended") : scheduleBoundary()), wait);
    boundary.unref();
  }

  /** JWKS URLs are fetched again every (shortest) refresh interval; keys that changed apply as a file change does. */
  function scheduleRefresh(): void {
    if (refresh !== null) clearTimeout(refresh);
    refresh = null;
    const every = closed ? undefined : trust.gate.roots.jwksRefreshMs;
    if (every === undefined || !path) return;
    refresh = setTimeout(() => void refreshUrls(path).finally(scheduleRefresh), every);
    refresh.unref();
  }

  async function refreshUrls(file: string): Promise<void> {
    const before = urls.generation;
    let read;
    try {
      read = await readTrustFile(file, urls.get);
    } catch (err) {
      log.error({ err, trust_file: file }, "trust roots not refreshed; keeping the last good ones");
      return;
    }
    if (urls.generation === before) return;
    trust.gate.replace(read.roots);
    log.info({ trust_file: file }, "keys of a JWKS URL changed; trust roots replaced");
    await rejudge("keys of a JWKS URL changed");
  }

  const reload = async (): Promise<void> => {
    if (!path || closed) return;
    let read;
    try {
      read = await readTrustFile(path, urls.get);
    } catch (err) {
      log.error({ err, trust_file: path }, "trust file not applied; keeping the last good trust roots");
      ctx.metrics.trustFileErrors.inc();
      return;
    }
    trust.gate.replace(read.roots);
    log.info({ trust_file: path, enabled: read.roots.enabled }, "trust roots reloaded");
    scheduleRefresh();
    watchAll(read.sources);
    await rejudge("trust roots reloaded");
  };

  function watchAll(sources: readonly TrustSource[]): void {
    for (const w of watches) w.close();
    // Each watch starts from the text just applied, so only a later change reloads.
    watches = sources.map((s) => watchFile(s.path, () => void reload(), { initial: s.text }));
  }

  // Registered first, so a stop while the start judges still closes what was opened.
  ctx.teardown.defer("closing the trust file watches", () => {
    closed = true;
    for (const w of watches) w.close();
    if (boundary !== null) clearTimeout(boundary);
    if (refresh !== null) clearTimeout(refresh);
  });
  if (path) {
    // Read again, to know what to watch and from which text: a change after this read reloads.
    const current = await readTrustFile(path, urls.get).catch((err: unknown) => {
      log.error({ err, trust_file: path }, "trust file no longer reads; keeping the trust roots read at start");
      return null;
    });
    if (current !== null) {
      trust.gate.replace(current.roots);
      watchAll(current.sources);
    } else watches = [watchFile(path, () => void reload())];
  }
  // The bucket's roots join the file's; the specs stored before these roots (the file or the
  // bucket may have changed while the registry was down) are judged now.
  await followBucketTrust(ctx, feed, trust.gate, rejudge).then(() => rejudge("start"));
  scheduleRefresh();
}
