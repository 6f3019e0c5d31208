/**
 * Keeps the trust roots the bucket holds in force on this replica (docs/trust.md, "Trust roots
 * in the bucket"): the view applies `_registry.trust.<tenant>` from the bucket's change log like
 * every other key; each change here imports the entries' keys again, merges them under the trust
 * file's roots (a tenant the file names keeps the file's), and judges every stored spec again as
 * a file change does. Every replica does the same from its own view; the re-judgement's writes
 * are compare-and-set, so each spec's new standing is written, and its event stored, once.
 */
import { bucketTenantTrustOf, type TenantTrust } from "../domain/trust/trust-roots.js";
import type { TrustGate } from "../service/registration/trust-gate.js";
import type { ViewFeed } from "../service/view/view-feed.js";
import type { StartContext } from "./context.js";

/** Follows the bucket's entries from now on, after applying those the view holds (before the start's judgement). */
export async function followBucketTrust(ctx: StartContext, feed: Pick<ViewFeed, "whenLoaded">, gate: TrustGate, rejudge: (reason: string) => Promise<unknown>): Promise<void> {
  const log = ctx.root.child({ component: "trust" });
  const book = ctx.view.trustRoots;
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;

  async function build(): Promise<Map<string, TenantTrust>> {
    const tenants = new Map<string, TenantTrust>();
    for (const [tenant, { record, revision }] of [...book.all()]) {
      // Kept all the same: the gate puts the file's entry first (TrustRoots.withBucket), and the
      // bucket's applies again, with no change of its own, once the file stops naming the tenant.
      if (gate.fileRoots.names(tenant)) log.warn({ tenant, revision }, "trust roots in the bucket not applied: the trust file names this tenant, and the file wins");
      try {
        tenants.set(tenant, await bucketTenantTrustOf(record.trust, `_registry.trust.${tenant}`));
      } catch (err) {
        // Checked when written, so only a key this runtime cannot import gets here: that tenant stays without bucket roots.
        log.error({ err, tenant, revision }, "trust roots in the bucket not applied");
      }
    }
    return tenants;
  }

  const changed = (): void => {
    if (closed) return;
    if (running !== null) {
      again = true;
      return;
    }
    const run = async (): Promise<void> => {
      do {
        again = false;
        // While the view reloads (the store's history went backwards) it holds part of the
        // bucket: roots built then would judge specs by entries not read yet.
        await feed.whenLoaded();
        if (closed) return;
        gate.replaceBucket(await build());
        log.info({ tenants: [...book.all().keys()] }, "trust roots in the bucket changed; trust roots replaced");
        await rejudge("trust roots in the bucket changed");
      } while (again && !closed);
    };
    running = run()
      .catch((err: unknown) => log.error({ err }, "applying the bucket's trust roots failed"))
      .finally(() => {
        running = null;
      });
  };

  book.onChange = changed;
  ctx.teardown.defer("no longer following the bucket's trust roots", () => {
    closed = true;
    book.onChange = undefined;
  });
  gate.replaceBucket(await build());
}
