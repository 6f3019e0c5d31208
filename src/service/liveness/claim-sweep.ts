/**
 * The retention side of nats_subject claims (domain/lifecycle/subject-claim.ts), run by the
 * evicting replica as part of its retention sweep:
 *  - a type removed after retention gives its subject back, claim first, then the spec;
 *  - orphan claims (no spec stands behind them any more) are removed once two sweeps in a row
 *    saw them unchanged, so a registration between its claim and its spec write is never hit;
 *  - a store written before claims existed gets one for every stored type, live types first,
 *    so the subjects of existing agents cannot be taken while they are down.
 * Every write is a compare-and-set; losing one means someone else changed the key, which is
 * always theirs to win.
 */
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { isOrphanClaim } from "../../domain/lifecycle/subject-claim.js";
import { AgentStatus, type AgentState } from "../../domain/model/model.js";
import { encodeClaim, subjectClaimKey } from "../../domain/model/subject-claims.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import { loopPacer } from "../../kit/loop-pacer.js";

/** Agent types looked at between two turns of the event loop (loop-pacer.ts). */
const SLICE = 500;

export class ClaimSweep {
  /** Orphan claims seen by the last sweep: key -> the revision they had then. */
  private suspects = new Map<string, number>();

  constructor(private readonly deps: { store: Store; view: RegistryView; log: Logger }) {}

  /**
   * Removes the claim of a type about to be removed after retention. False when the claim
   * changed since the view saw it (the type registered again and rewrote it): the type stays.
   */
  async release(agent: AgentState): Promise<boolean> {
    const claim = this.deps.view.claims.forSubject(agent.spec.nats_subject);
    if (!claim || claim.record.agent_type !== agent.agent_type) return true;
    return this.quietly(() => this.deps.store.remove(subjectClaimKey(agent.spec.nats_subject), claim.revision));
  }

  async sweep(now: number): Promise<void> {
    await this.removeOrphans();
    await this.claimUnclaimed(now);
  }

  private async removeOrphans(): Promise<void> {
    const { view } = this.deps;
    const suspects = new Map<string, number>();
    for (const [key, claim] of view.claims.entries()) {
      if (!isOrphanClaim(claim.record, view.get(claim.record.agent_type))) continue;
      if (this.suspects.get(key) === claim.revision) {
        this.deps.log.info({ subject: claim.record.subject, agent_type: claim.record.agent_type }, "removing an orphan nats_subject claim");
        await this.quietly(() => this.deps.store.remove(key, claim.revision));
      } else suspects.set(key, claim.revision);
    }
    this.suspects = suspects;
  }

  private async claimUnclaimed(now: number): Promise<void> {
    const { view, store } = this.deps;
    const unclaimed: AgentState[] = [];
    const pace = loopPacer(SLICE);
    // A Map's iterator stays valid while the view changes between slices.
    for (const a of view.all()) {
      if (!view.claims.forSubject(a.spec.nats_subject)) unclaimed.push(a);
      await pace();
    }
    if (unclaimed.length === 0) return;
    // Two types sharing a subject from before claims: the live one keeps it.
    const live = (a: AgentState): number => (a.status === AgentStatus.Deregistered ? 1 : 0);
    unclaimed.sort((x, y) => live(x) - live(y) || x.registered_at - y.registered_at);
    const done = new Set<string>();
    for (const a of unclaimed) {
      const subject = a.spec.nats_subject;
      if (done.has(subject)) continue;
      done.add(subject);
      const record = { kind: "subject_claim" as const, subject, agent_type: a.agent_type, tenant_scope: a.spec.tenant_scope, at: now };
      await this.quietly(() => store.write(subjectClaimKey(subject), encodeClaim(record), 0).then(() => undefined));
    }
  }

  /** True when the write went through; a lost compare-and-set is someone else's newer write. */
  private async quietly(op: () => Promise<void>): Promise<boolean> {
    try {
      await op();
      return true;
    } catch (e) {
      if (!(e instanceof StoreConflictError)) this.deps.log.warn({ err: e }, "nats_subject claim sweep write failed");
      return false;
    }
  }
}
