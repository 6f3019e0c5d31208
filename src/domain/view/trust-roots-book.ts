/**
 * The tenants' trust roots as the bucket holds them (`_registry.trust.<tenant>`,
 * domain/trust/bucket-trust.ts), kept by each replica from the bucket's change log like the
 * rest of its view. A change derives `registry.trust.roots_changed`, once per write since it
 * follows from the store's revision, and tells the listener the start layer sets, which turns
 * the entries into trust roots and judges the stored specs again (start/trust-bucket.ts).
 */
import { EventType, type TrustRootsChangedData } from "../../protocol/events.js";
import { readBucketTrust, tenantOfTrustRootsKey, type StoredBucketTrust } from "../trust/bucket-trust.js";
import type { StoreEntry } from "../ports.js";
import type { DerivedEvent } from "./events.js";

export class TrustRootsBook {
  private readonly entries = new Map<string, StoredBucketTrust>();
  /** Called after every change of the entries (the start layer rebuilds the trust roots). */
  onChange: (() => void) | undefined;

  get(tenant: string): StoredBucketTrust | undefined {
    return this.entries.get(tenant);
  }

  all(): ReadonlyMap<string, StoredBucketTrust> {
    return this.entries;
  }

  /**
   * Applies an entry of a trust roots key: the event it causes. A record that does not read is
   * reported and the entry held before stays: only the registry writes these keys, after the
   * same checks, so an unreadable one is damage, not an operator's intent to drop the roots.
   */
  apply(entry: StoreEntry, unreadable: (problem: string) => void): DerivedEvent[] {
    const tenant = tenantOfTrustRootsKey(entry.key);
    if (tenant === undefined) {
      unreadable("key: not _registry.trust.<tenant>");
      return [];
    }
    if (entry.operation !== "PUT") {
      if (!this.entries.delete(tenant)) return [];
      this.onChange?.();
      return [changed(tenant, { change: "deleted", mode: null, approval: null, kids: [], by: null, revision: entry.revision })];
    }
    const record = readBucketTrust(entry);
    if (typeof record === "string") {
      unreadable(record);
      return [];
    }
    this.entries.set(tenant, { record, revision: entry.revision });
    this.onChange?.();
    const t = record.trust;
    const kids = (t.jwks?.keys ?? []).map((k) => k.kid);
    return [changed(tenant, { change: "set", mode: t.mode, approval: t.approval, kids, by: record.by, revision: entry.revision })];
  }

  clear(): void {
    if (this.entries.size === 0) return;
    this.entries.clear();
    this.onChange?.();
  }
}

function changed(tenant: string, data: Omit<TrustRootsChangedData, "tenant">): DerivedEvent {
  return { type: EventType.TrustRootsChanged, subject: tenant, data: { tenant, ...data } };
}
