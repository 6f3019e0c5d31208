/**
 * Byte budgets (issue 35): the bucket is shared, and a full bucket refuses every write, for
 * every tenant, heartbeats included. Instance counts and metadata sizes alone let one agent
 * type take 1.6 GB (100,000 instances of 16 KB) of a 1 GB bucket. So each agent type, and each
 * tenant (the shared agents as one more), may hold only so many bytes of it, counted from the
 * view (domain/view/byte-tally.ts) as `history` copies of each record: what a key comes to
 * under store liveness. A registration that would add bytes past a budget is refused with
 * `limit_exceeded` naming the setting; heartbeats are never refused, and neither is a live
 * instance registering again with no more metadata than it had. As with the count quotas,
 * replicas taking registrations at the same moment may pass a budget by what they take
 * meanwhile: a budget, not a lock.
 */
import { limitExceeded } from "../errors.js";

/** Bytes of the bucket one agent type, and one tenant, may hold; 0: no budget. */
export type ByteBudgets = {
  readonly typeMaxBytes: number;
  readonly tenantMaxBytes: number;
};

/** A tenth of the bucket per agent type, half of it per tenant, unless set. */
export const TYPE_SHARE_OF_BUCKET = 10;
export const TENANT_SHARE_OF_BUCKET = 2;

/**
 * The budgets a configuration asks for: those it sets, else shares of the bucket's max_bytes
 * (an unlimited bucket, 0, gives no default budget). Half per tenant keeps any one tenant, and
 * the shared agents, from filling the bucket on the others, while leaving a deployment of one
 * tenant most of it; a tenth per type keeps one runaway deployment from taking its tenant's half.
 */
export function byteBudgetsOf(c: { readonly bucketMaxBytes: number; readonly typeMaxBytes?: number; readonly tenantMaxBytes?: number }): ByteBudgets {
  return {
    typeMaxBytes: c.typeMaxBytes ?? Math.floor(c.bucketMaxBytes / TYPE_SHARE_OF_BUCKET),
    tenantMaxBytes: c.tenantMaxBytes ?? Math.floor(c.bucketMaxBytes / TENANT_SHARE_OF_BUCKET),
  };
}

export type ByteFacts = {
  readonly agentType: string;
  readonly tenant: string | null;
  /** What the type, and its tenant, hold now. */
  readonly typeBytes: number;
  readonly tenantBytes: number;
  /** What the registration adds (0 or less: it adds nothing, and passes whatever the budgets). */
  readonly adding: number;
};

export function checkByteBudgets(f: ByteFacts, b: ByteBudgets): void {
  if (f.adding <= 0) return;
  if (b.typeMaxBytes > 0 && f.typeBytes + f.adding > b.typeMaxBytes) {
    throw limitExceeded(`agent type ${f.agentType} holds about ${f.typeBytes} bytes of the bucket and this registration would add ${f.adding}`, "REGISTRY_TYPE_MAX_BYTES", b.typeMaxBytes);
  }
  if (b.tenantMaxBytes > 0 && f.tenantBytes + f.adding > b.tenantMaxBytes) {
    const who = f.tenant === null ? "the shared agents hold" : `tenant ${f.tenant} holds`;
    throw limitExceeded(`${who} about ${f.tenantBytes} bytes of the bucket and this registration would add ${f.adding}`, "REGISTRY_TENANT_MAX_BYTES", b.tenantMaxBytes);
  }
}

/**
 * Whether a lagging view could matter: within a tenth of a budget, the registrar first brings
 * the view up to the store, so registrations sent one after another stop at the budget.
 */
export function nearByteBudget(f: ByteFacts, b: ByteBudgets): boolean {
  if (f.adding <= 0) return false;
  const near = (held: number, max: number) => max > 0 && held + f.adding > max - max / 10;
  return near(f.typeBytes, b.typeMaxBytes) || near(f.tenantBytes, b.tenantMaxBytes);
}
