/**
 * Secondary indexes over the view's agents, so queries (route, find, list, lookup) touch
 * only the agents that can match instead of scanning the whole fleet. The view calls
 * `update` whenever an agent's spec, status or instances change; plain heartbeats do not
 * change anything indexed here, so they need not call it.
 *
 * The index holds every agent it is given, deregistered ones included (get and list still
 * show them during retention); callers filter on status and visibility.
 *
 * Capability -> agent types is the view's own CapabilityIndex, given to the constructor: one
 * structure serves the view (capability events, subject ownership) and the queries. Without
 * one (unit tests of the index alone) the index keeps its own.
 */
import type { AgentState } from "../model/model.js";
import { CapabilityIndex, type CapabilityLookup } from "../view/capability-index.js";
import { SetIndex } from "../set-index.js";
import { indexAfter } from "./page.js";

/** The index keys one agent contributes, computed from its state alone so removal mirrors insertion. */
type AgentKeys = {
  tags: string[];
  specTags: string[];
  runtime: string | undefined;
  owner: string;
};

function keysOf(agent: AgentState): AgentKeys {
  const tags = new Set<string>();
  for (const cap of agent.spec.capabilities) for (const t of cap.tags) tags.add(t);
  return {
    tags: [...tags],
    specTags: Object.entries(agent.spec.tags).map(([k, v]) => specTagKey(k, v)),
    runtime: agent.spec.runtime,
    owner: agent.spec.owner_team,
  };
}

// JSON keeps (key, value) pairs apart even when a key or value contains any separator.
const specTagKey = (key: string, value: string): string => JSON.stringify([key, value]);

export { indexAfter };

export class AgentIndex {
  // The keys indexed for each agent are kept with it: the view updates its agent objects in
  // place, so the previous keys cannot be recomputed from the object it passes next time.
  private readonly agents = new Map<string, { agent: AgentState; keys: AgentKeys; spec: AgentState["spec"] }>();
  private readonly capabilities: CapabilityLookup;
  /** Set when no index was given: this one then keeps its capabilities itself. */
  private readonly ownCapabilities: CapabilityIndex | undefined;
  private readonly tags = new SetIndex();
  private readonly specTags = new SetIndex();
  private readonly runtimes = new SetIndex();
  private readonly owners = new SetIndex();
  // Kept sorted on insert/remove (binary search + splice): list pages read it on every call.
  private readonly sorted: string[] = [];

  constructor(capabilities?: CapabilityLookup) {
    this.ownCapabilities = capabilities === undefined ? new CapabilityIndex() : undefined;
    this.capabilities = capabilities ?? (this.ownCapabilities as CapabilityIndex);
  }

  /** Sets the state of one agent type; `undefined` removes it. Applying the same state again changes nothing. */
  update(agentType: string, agent: AgentState | undefined): void {
    const previous = this.agents.get(agentType);
    // Every key comes from the spec, and a changed spec is a new object (the view decodes each
    // record afresh), so an update with the spec the keys were made from (an instance joined,
    // left or changed status) changes no key. Re-indexing it anyway deleted and re-added the
    // type in sets shared by thousands of types, which made V8 rehash them: 30% of a cold
    // start at 100,000 instances (docs/performance.md).
    if (previous && agent && previous.spec === agent.spec) {
      previous.agent = agent;
      return;
    }
    if (previous) this.unindex(agentType, previous.keys, previous.spec);
    if (agent) {
      const keys = keysOf(agent);
      this.index(agentType, keys, agent.spec);
      this.agents.set(agentType, { agent, keys, spec: agent.spec });
      if (!previous) this.sorted.splice(indexAfter(this.sorted, agentType), 0, agentType);
    } else if (previous) {
      this.agents.delete(agentType);
      this.sorted.splice(indexAfter(this.sorted, agentType) - 1, 1);
    }
  }

  get(agentType: string): AgentState | undefined {
    return this.agents.get(agentType)?.agent;
  }

  /** Agent types with a capability of that exact name. */
  byCapability(name: string): ReadonlySet<string> {
    return this.capabilities.providersOf(name);
  }

  /** Agent types having `tag` on any of their capabilities. */
  byTag(tag: string): ReadonlySet<string> {
    return this.tags.get(tag);
  }

  /** Agent types whose spec.tags map has `key` set to `value`. */
  bySpecTag(key: string, value: string): ReadonlySet<string> {
    return this.specTags.get(specTagKey(key, value));
  }

  byRuntime(runtime: string): ReadonlySet<string> {
    return this.runtimes.get(runtime);
  }

  byOwner(team: string): ReadonlySet<string> {
    return this.owners.get(team);
  }

  /** Every agent type, in lexicographic order. Do not mutate; it changes on the next update. */
  sortedTypes(): readonly string[] {
    return this.sorted;
  }

  /** Every agent, in no particular order. */
  *all(): IterableIterator<AgentState> {
    for (const entry of this.agents.values()) yield entry.agent;
  }

  get size(): number {
    return this.agents.size;
  }

  private index(agentType: string, keys: AgentKeys, spec: AgentState["spec"]): void {
    this.ownCapabilities?.add(agentType, spec);
    for (const t of keys.tags) this.tags.add(t, agentType);
    for (const t of keys.specTags) this.specTags.add(t, agentType);
    if (keys.runtime !== undefined) this.runtimes.add(keys.runtime, agentType);
    this.owners.add(keys.owner, agentType);
  }

  private unindex(agentType: string, keys: AgentKeys, spec: AgentState["spec"]): void {
    this.ownCapabilities?.remove(agentType, spec);
    for (const t of keys.tags) this.tags.delete(t, agentType);
    for (const t of keys.specTags) this.specTags.delete(t, agentType);
    if (keys.runtime !== undefined) this.runtimes.delete(keys.runtime, agentType);
    this.owners.delete(keys.owner, agentType);
  }
}
