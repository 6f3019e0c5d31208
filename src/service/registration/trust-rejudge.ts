/**
 * Judges every stored spec again against the trust roots in force (docs/trust.md, "When trust
 * roots change"), after the trust file changed, at start (the file may have changed while the
 * registry was down), and when a grant's `not_before` or `not_after` passes. A spec whose
 * standing changed (trust-standing.ts) is rewritten with compare-and-set on the revision it
 * was judged at: every replica judges, the first write wins, the others find nothing left to
 * change, and `registry.agent.trust_changed` follows from the record's change once
 * (domain/view/trust-events.ts). A spec replaced meanwhile is judged again as it now is.
 */
import { agentKey, decodeAgentRecord, encodeRecord } from "../../domain/model/records.js";
import type { AgentRecord } from "../../domain/model/record-types.js";
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { judgeStored, sameStanding, type TrustStanding } from "../../domain/trust/trust-standing.js";
import type { TrustRoots } from "../../domain/trust/trust-roots.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import type { Clock } from "../clock.js";

const MAX_ATTEMPTS = 5;

export type TrustRejudgeDeps = {
  store: Store;
  view: RegistryView;
  clock: Clock;
  log: Logger;
  /** The trust roots in force (the trust gate's). */
  roots: () => TrustRoots;
  /** Each spec whose standing this replica rewrote. */
  onRewritten?: () => void;
};

export class TrustRejudge {
  private running: Promise<number> | null = null;
  private again = false;

  constructor(private readonly deps: TrustRejudgeDeps) {}

  /**
   * Judges every stored spec; resolves with how many this replica rewrote. A call while a pass
   * runs asks for one more pass after it, so the roots of the last call are the ones applied.
   */
  all(reason: string): Promise<number> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<number> => {
      let rewritten = 0;
      do {
        this.again = false;
        rewritten += await this.pass(reason);
      } while (this.again);
      return rewritten;
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(reason: string): Promise<number> {
    let rewritten = 0;
    const types = [...this.deps.view.all()].map((a) => a.agent_type);
    for (const agentType of types) {
      // Judged on the view first: only a spec whose standing changes costs a read and a write.
      const known = this.deps.view.get(agentType);
      if (known === undefined) continue;
      if (sameStanding(known, await judgeStored(known, this.deps.roots().forTenant(known.spec.tenant_scope ?? null), this.deps.clock.now()))) continue;
      try {
        if (await this.one(agentType)) rewritten++;
      } catch (err) {
        // One spec the store would not take is logged; the others are still judged.
        this.deps.log.error({ err, agent_type: agentType }, "could not store a spec's new trust standing");
      }
    }
    const log = this.deps.log;
    (rewritten > 0 ? log.info.bind(log) : log.debug.bind(log))({ reason, judged: types.length, rewritten }, "stored specs judged again against the trust roots");
    return rewritten;
  }

  /** Whether this replica rewrote the spec record of `agentType`. */
  private async one(agentType: string): Promise<boolean> {
    const { store, clock } = this.deps;
    const key = agentKey(agentType);
    for (let attempt = 1; ; attempt++) {
      const entry = await store.get(key);
      const record = entry !== null && entry.operation === "PUT" ? decodeAgentRecord(entry.value, agentType) : null;
      if (entry === null || record === null) return false;
      const standing = await judgeStored(record, this.deps.roots().forTenant(record.spec.tenant_scope ?? null), clock.now());
      if (sameStanding(record, standing)) return false;
      try {
        await store.write(key, encodeRecord(withStanding(record, standing)), entry.revision);
        this.deps.onRewritten?.();
        return true;
      } catch (e) {
        if (!(e instanceof StoreConflictError) || attempt >= MAX_ATTEMPTS) throw e;
      }
    }
  }
}

function withStanding(record: AgentRecord, standing: TrustStanding): AgentRecord {
  const { trust: _trust, trust_lapse: _lapse, ...rest } = record;
  return { ...rest, ...standing };
}

/** Epoch ms of the next `not_before` or `not_after` bound of any grant after `now` (a standing may change then); undefined: none. */
export function nextGrantBoundary(roots: TrustRoots, now: number): number | undefined {
  let next: number | undefined;
  for (const t of roots.all()) {
    for (const g of t.signers) {
      // not_after is inclusive: the grant ends just after it.
      for (const at of [g.notBefore, g.notAfter === undefined ? undefined : g.notAfter + 1]) {
        if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
      }
    }
  }
  return next;
}
