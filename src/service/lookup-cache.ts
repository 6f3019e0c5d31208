/**
 * Serialized lookup replies, kept until an agent type providing their capability changes.
 * Coordinators ask the same few lookups again and again, and building a reply (validated
 * query, providers sorted, their schemas serialized) cost several times what a bare responder
 * spends on a request (docs/performance.md). The cache is told of every change that can alter
 * a lookup reply: the view calls `update` when an agent's spec, status or instances change
 * (plain heartbeats change nothing a lookup shows). The revision is not cached: the caller
 * adds the current one to every reply.
 */
import type { AgentState } from "../domain/model.js";

/** Enough for every capability of 10,000 agent types with three providers each. */
export const LOOKUP_CACHE_BYTES = 48 * 2 ** 20;

/** What the cache holds: anything that tells how many bytes it keeps. */
export type Sized = { readonly length: number };

export class LookupCache<R extends Sized = Uint8Array> {
  /** key -> serialized reply (without its revision), oldest first (eviction order). */
  private readonly replies = new Map<string, { capability: string; reply: R }>();
  private readonly keysByCapability = new Map<string, Set<string>>();
  /** The capabilities each agent type declared when last seen, to drop them when they go. */
  private readonly capabilitiesByType = new Map<string, readonly string[]>();
  private size = 0;

  constructor(private readonly budgetBytes = LOOKUP_CACHE_BYTES) {}

  get(key: string): R | undefined {
    return this.replies.get(key)?.reply;
  }

  set(key: string, capability: string, reply: R): void {
    this.drop(key);
    this.replies.set(key, { capability, reply });
    let keys = this.keysByCapability.get(capability);
    if (!keys) this.keysByCapability.set(capability, (keys = new Set()));
    keys.add(key);
    this.size += reply.length;
    for (const oldest of this.replies.keys()) {
      if (this.size <= this.budgetBytes) break;
      this.drop(oldest);
    }
  }

  /** AgentListener: forgets every reply about a capability the agent type had or has now. */
  update(agentType: string, agent: AgentState | undefined): void {
    const now = agent ? agent.spec.capabilities.map((c) => c.name) : [];
    for (const capability of [...(this.capabilitiesByType.get(agentType) ?? []), ...now]) {
      for (const key of this.keysByCapability.get(capability) ?? []) this.drop(key);
    }
    if (agent) this.capabilitiesByType.set(agentType, now);
    else this.capabilitiesByType.delete(agentType);
  }

  get bytes(): number {
    return this.size;
  }

  private drop(key: string): void {
    const entry = this.replies.get(key);
    if (!entry) return;
    this.replies.delete(key);
    this.size -= entry.reply.length;
    const keys = this.keysByCapability.get(entry.capability);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByCapability.delete(entry.capability);
  }
}
