/**
 * The operator's ops on the tenants' trust roots in the bucket (docs/trust.md, "Trust roots in
 * the bucket"): set, read and delete `_registry.trust.<tenant>`. An entry is checked as the
 * trust file's tenant entry is (the same schema, its keys imported and its grants tied to them),
 * inline keys only, and bounded; nothing is written when it fails. Writes are compare-and-set
 * on the revision the operator expects (or the one just read), so two operators never overwrite
 * each other unseen. Every replica applies the entry from its view (start/trust-bucket.ts), and
 * `registry.trust.roots_changed` follows from the store's change like every other event.
 */
import { conflict, invalidRequest, notFound } from "../../domain/errors.js";
import {
  MAX_BUCKET_TRUST_BYTES,
  encodeBucketTrust,
  readBucketTrust,
  trustRootsKey,
  type BucketTrustRecord,
} from "../../domain/trust/bucket-trust.js";
import { bucketTenantTrustOf } from "../../domain/trust/trust-roots.js";
import { StoreConflictError, type Store, type StoreEntry } from "../../domain/ports.js";
import type { TrustDeleteMessage, TrustSetMessage } from "../../domain/messages.js";
import type { TrustRootsReply } from "../../protocol/messages.js";
import type { Clock } from "../clock.js";
import type { TrustGate } from "./trust-gate.js";
import { storeError } from "./store-errors.js";

const MAX_ATTEMPTS = 5;

export type BucketTrustDeps = { store: Store; clock: Clock; gate: TrustGate };

export class BucketTrustOps {
  constructor(private readonly deps: BucketTrustDeps) {}

  async set(tenant: string, msg: TrustSetMessage): Promise<TrustRootsReply> {
    this.refuseFileTenant(tenant);
    try {
      // Imports every key and ties every grant to one, as a trust file's entry is checked.
      await bucketTenantTrustOf(msg.trust, "trust");
    } catch (e) {
      const problem = (e as Error).message;
      throw invalidRequest(`trust roots for tenant ${tenant} refused: ${problem}`, [{ path: "trust", message: problem }]);
    }
    const record: BucketTrustRecord = { kind: "trust_roots", tenant, trust: msg.trust, by: msg.by ?? null, at: this.deps.clock.now() };
    const bytes = encodeBucketTrust(record);
    if (bytes.length > MAX_BUCKET_TRUST_BYTES) {
      throw invalidRequest(`trust roots for tenant ${tenant} take ${bytes.length} bytes, over ${MAX_BUCKET_TRUST_BYTES}`, [
        { path: "trust", message: `over ${MAX_BUCKET_TRUST_BYTES} bytes stored` },
      ]);
    }
    const key = trustRootsKey(tenant);
    for (let attempt = 1; ; attempt++) {
      const current = revisionOf(await this.read(key));
      if (msg.revision !== undefined && msg.revision !== current) throw changedSince(tenant, current, msg.revision);
      try {
        const revision = await this.deps.store.write(key, bytes, current);
        return { tenant, trust: record.trust, by: record.by, revision, in_force: "bucket" };
      } catch (e) {
        if (!(e instanceof StoreConflictError)) throw storeError(e);
        // A revision the operator named is checked again against what won; none named: retry on the new one.
        if (attempt >= MAX_ATTEMPTS) throw conflict(`lost the write race on tenant ${tenant}'s trust roots ${MAX_ATTEMPTS} times in a row; retry`);
      }
    }
  }

  async get(tenant: string): Promise<TrustRootsReply> {
    const entry = await this.read(trustRootsKey(tenant));
    const record = entry === null || entry.operation !== "PUT" ? null : readBucketTrust(entry);
    const held = record !== null && typeof record !== "string" ? record : null;
    return { tenant, trust: held?.trust ?? null, by: held?.by ?? null, revision: held === null ? null : entry!.revision, in_force: this.inForce(tenant) };
  }

  async delete(tenant: string, msg: TrustDeleteMessage): Promise<TrustRootsReply> {
    const key = trustRootsKey(tenant);
    const entry = await this.read(key);
    const current = revisionOf(entry);
    if (current === 0) throw notFound(`the bucket holds no trust roots for tenant ${tenant}`);
    if (msg.revision !== undefined && msg.revision !== current) throw changedSince(tenant, current, msg.revision);
    try {
      await this.deps.store.remove(key, current);
    } catch (e) {
      if (e instanceof StoreConflictError) throw changedSince(tenant, undefined, current);
      throw storeError(e);
    }
    return { tenant, trust: null, by: msg.by ?? null, revision: null, in_force: this.deps.gate.fileRoots.names(tenant) ? "file" : "none" };
  }

  /** A tenant the trust file names keeps the file's roots: an entry for it in the bucket would never apply. */
  private refuseFileTenant(tenant: string): void {
    if (this.deps.gate.fileRoots.names(tenant)) {
      throw conflict(`tenant ${tenant}'s trust roots come from the trust file, which wins over the bucket: change the file, or remove the tenant from it first`);
    }
  }

  private inForce(tenant: string): TrustRootsReply["in_force"] {
    const gate = this.deps.gate;
    return gate.fileRoots.names(tenant) ? "file" : gate.roots.names(tenant) ? "bucket" : "none";
  }

  private async read(key: string): Promise<StoreEntry | null> {
    try {
      return await this.deps.store.get(key);
    } catch (e) {
      throw storeError(e);
    }
  }
}

/** The revision a compare-and-set expects: the entry's, or 0 when none is stored (never written, or deleted). */
const revisionOf = (entry: StoreEntry | null): number => (entry === null || entry.operation !== "PUT" ? 0 : entry.revision);

function changedSince(tenant: string, current: number | undefined, expected: number) {
  const now = current === undefined ? "changed" : current === 0 ? "holds no entry" : `is at revision ${current}`;
  return conflict(`tenant ${tenant}'s trust roots in the bucket ${now}, not revision ${expected}: read them again and decide on what is stored`);
}
