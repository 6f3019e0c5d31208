/**
 * An operator's decision on the stored spec record of one agent type (an approval, a rejection,
 * a deprecation): read the record, let the decision rewrite it, and write it with
 * compare-and-set on the revision read, so it applies to exactly the spec it was taken on. A
 * registration that replaced the record meanwhile makes the write lose, and the decision is
 * taken again on what the store now holds (refused if the operator named the revision they
 * reviewed and it is no longer that one). The events follow from the record's change.
 */
import { conflict, notFound } from "../../domain/errors.js";
import { agentKey, decodeAgentRecord, encodeRecord } from "../../domain/model/records.js";
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { storeError } from "./store-errors.js";
import type { AgentRecord } from "../../domain/model/record-types.js";
import type { Clock } from "../clock.js";

const MAX_ATTEMPTS = 5;

export type SpecRecordRewriteDeps = { readonly store: Store; readonly clock: Clock };

/**
 * Rewrites the spec record of `agentType` by `decide` (which throws a RegistryError when the
 * decision does not apply) and returns the record written with its revision. `reviewedRevision`
 * is the revision the operator reviewed: another one stored is 409 `conflict`.
 */
export async function rewriteSpecRecord(
  deps: SpecRecordRewriteDeps,
  agentType: string,
  reviewedRevision: number | undefined,
  decide: (stored: AgentRecord, now: number) => AgentRecord,
): Promise<{ record: AgentRecord; revision: number }> {
  const key = agentKey(agentType);
  for (let attempt = 1; ; attempt++) {
    let entry;
    try {
      entry = await deps.store.get(key);
    } catch (e) {
      throw storeError(e);
    }
    const stored = entry !== null && entry.operation === "PUT" ? decodeAgentRecord(entry.value, agentType) : null;
    if (entry === null || stored === null) throw notFound(`agent type ${agentType} is not registered`);
    if (reviewedRevision !== undefined && reviewedRevision !== entry.revision) {
      throw conflict(`${agentType}'s spec record is at revision ${entry.revision}, not ${reviewedRevision}: it changed since it was reviewed; review it again`);
    }
    const record = decide(stored, deps.clock.now());
    try {
      return { record, revision: await deps.store.write(key, encodeRecord(record), entry.revision) };
    } catch (e) {
      if (!(e instanceof StoreConflictError)) throw storeError(e);
      if (attempt >= MAX_ATTEMPTS) throw conflict(`lost the write race on ${agentType}'s spec ${MAX_ATTEMPTS} times in a row; retry`);
    }
  }
}
