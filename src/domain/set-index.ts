/**
 * A key -> set of agent types map that drops a key when its last agent type leaves, so it
 * holds no empty sets and its keys are exactly the keys some agent type has. The view's
 * capability and subject indexes and the query indexes (agent-index.ts) are all of this kind.
 */
const EMPTY: ReadonlySet<string> = new Set<string>();

export class SetIndex {
  private readonly sets = new Map<string, Set<string>>();

  add(key: string, agentType: string): void {
    let set = this.sets.get(key);
    if (!set) {
      set = new Set();
      this.sets.set(key, set);
    }
    set.add(agentType);
  }

  delete(key: string, agentType: string): void {
    const set = this.sets.get(key);
    if (!set) return;
    set.delete(agentType);
    if (set.size === 0) this.sets.delete(key);
  }

  get(key: string): ReadonlySet<string> {
    return this.sets.get(key) ?? EMPTY;
  }

  keys(): IterableIterator<string> {
    return this.sets.keys();
  }

  clear(): void {
    this.sets.clear();
  }
}
