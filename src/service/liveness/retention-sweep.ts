/**
 * Removes what outlived the retention period (REGISTRY_RETENTION_MS): tombstones of evicted and
 * deregistered instances, deregistered agent types with none left, and with them their
 * nats_subject claims (claim-sweep.ts). Run by the evictor on the replica that holds the
 * evictor lease, every 30 s; each removal is a compare-and-set against the revision the view
 * saw, so a type that registers again meanwhile is never removed.
 */
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { agentKey, instanceKey } from "../../domain/model/records.js";
import { AgentStatus } from "../../domain/model/model.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import { loopPacer } from "../../kit/loop-pacer.js";
import { ClaimSweep } from "./claim-sweep.js";

/** Removed with their kept values: a delete would leave the last records in the bucket for ever (ports.ts, RemoveOptions). */
const PURGE = { purge: true } as const;
/** Agent types the sweep looks at between two turns of the event loop (loop-pacer.ts). */
const SWEEP_SLICE = 500;

export class RetentionSweep {
  private readonly claims: ClaimSweep;

  constructor(private readonly deps: { store: Store; view: RegistryView; log: Logger; retentionMs: number }) {
    this.claims = new ClaimSweep({ store: deps.store, view: deps.view, log: deps.log });
  }

  /** One pass at `now`; a failed removal is logged and tried again by the next pass. */
  async run(now: number): Promise<void> {
    const cutoff = now - this.deps.retentionMs;
    const { view, store } = this.deps;
    const pace = loopPacer(SWEEP_SLICE);
    for (const agentType of view.retentionCandidates()) {
      await pace();
      for (const [instanceId, t] of view.tombstones(agentType)) {
        if (t.at <= cutoff) await this.quietly(() => store.remove(instanceKey(agentType, instanceId), t.revision, PURGE));
      }
      const agent = view.get(agentType);
      if (agent && agent.status === AgentStatus.Deregistered && (agent.deregistered_at ?? now) <= cutoff && view.tombstones(agentType).size === 0) {
        // The subject's claim goes first: deleted after the spec, a crash in between would leave
        // a claim with no type behind it; this way round it leaves a spec with no claim, which
        // the next sweep removes (or the type, registering again, claims anew).
        if (await this.claims.release(agent)) await this.quietly(() => store.remove(agentKey(agentType), agent.revision, PURGE));
      }
    }
    await this.claims.sweep(now);
  }

  private async quietly(op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } catch (e) {
      if (!(e instanceof StoreConflictError)) this.deps.log.warn({ err: e }, "retention sweep write failed");
    }
  }
}
