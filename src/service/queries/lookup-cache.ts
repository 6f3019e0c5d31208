/**
 * Serialized lookup replies, kept until an agent type providing their capability changes.
 * Coordinators ask the same few lookups again and again, and building a reply (validated
 * query, providers sorted, their schemas serialized) cost several times what a bare responder
 * spends on a request (docs/performance.md). The cache is told of every change that can alter
 * a lookup reply: the view calls `update` when an agent's spec, status or instances change
 * (plain heartbeats change nothing a lookup shows). The revision is not cached: the caller
 * adds the current one to every reply.
 */
import type { AgentState } from "../../domain/model/model.js";

/** Enough for every capability of 10,000 agent types with three providers each. */
export const LOOKUP_CACHE_BYTES = 48 * 2 ** 20;

/** What the cache holds: anything that tells how many bytes it keeps. */
export type Sized = { readonly length: number };

export class LookupCache<R extends Sized = Uint8Array> {
  /** key -> serialized reply (without its revision), oldest first (eviction order). */
  private readonly replies = new Map<string, { capability: string; reply: R }>();
  private readonly keysByCapability = new Map<string, Set<string>>();
  /** The spec each agent type had when last seen and its capability names, to drop their replies when it changes or goes. */
  private readonly capabilitiesByType = new Map<string, { spec: AgentState["spec"]; names: readonly string[] }>();
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
    const before = this.capabilitiesByType.get(agentType);
    // A changed spec is a new object (the view decodes each record afresh), so the names are
    // computed only then, not each time an instance joins, leaves or changes status: a cold
    // start at 100,000 instances called this 100,000 times, for 5 % of its CPU.
    const now = !agent ? undefined : before?.spec === agent.spec ? before : { spec: agent.spec, names: agent.spec.capabilities.map((c) => c.name) };
    if (this.replies.size > 0) {
      if (before) this.forget(before.names);
      if (now && now !== before) this.forget(now.names);
    }
    if (!now) this.capabilitiesByType.delete(agentType);
    else if (now !== before) this.capabilitiesByType.set(agentType, now);
  }

  /** Forgets every reply: a named schema came or went, and any reply may have inlined it. */
  clear(): void {
    this.replies.clear();
    this.keysByCapability.clear();
    this.size = 0;
  }

  get bytes(): number {
    return this.size;
  }

  private forget(capabilities: readonly string[]): void {
    for (const capability of capabilities) {
      const keys = this.keysByCapability.get(capability);
      if (keys) for (const key of keys) this.drop(key);
    }
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
