/**
 * Who depends on what, by dependency name: the reverse of every spec's `depends`, kept by the
 * view as specs come and go. It answers "which agent types must be told when this one changes"
 * (dependency events) and "who depends on this one" (the graph's dependents direction) without
 * a scan of the fleet.
 */
import type { Dependency } from "../../protocol/spec.js";
import type { AgentState } from "../model/model.js";

/** A dependency declared by `dependent`, at `index` in its spec's `depends`. */
export type DependentEdge = { dependent: string; index: number; dep: Dependency };

const NONE: readonly DependentEdge[] = [];

export class DependentsIndex {
  /** dependency name -> agent types that declare a dependency of that name. */
  private readonly byName = new Map<string, Set<string>>();
  /** agent type -> the names it depends on (what to take out when its spec changes). */
  private readonly namesOf = new Map<string, readonly string[]>();

  get size(): number {
    return this.namesOf.size;
  }

  clear(): void {
    this.byName.clear();
    this.namesOf.clear();
  }

  /** Records (or forgets, with undefined or an empty list) what `agentType` depends on. */
  set(agentType: string, depends: readonly Dependency[] | undefined): void {
    for (const name of this.namesOf.get(agentType) ?? []) {
      const set = this.byName.get(name);
      set?.delete(agentType);
      if (set?.size === 0) this.byName.delete(name);
    }
    if (!depends || depends.length === 0) {
      this.namesOf.delete(agentType);
      return;
    }
    const names = [...new Set(depends.map((d) => d.name))];
    this.namesOf.set(agentType, names);
    for (const name of names) {
      let set = this.byName.get(name);
      if (!set) this.byName.set(name, (set = new Set()));
      set.add(agentType);
    }
  }

  /** Agent types declaring a dependency named `name`. */
  dependentsNamed(name: string): ReadonlySet<string> | undefined {
    return this.byName.get(name);
  }

  /**
   * The declared dependencies that may resolve to the agent type `agentType` with these
   * capabilities: those naming the agent type, and tool dependencies naming a capability.
   * Sorted by dependent, then position, so every replica derives its events in one order.
   * `specOf` reads a dependent's spec.
   */
  edgesFor(agentType: string, capabilities: Iterable<string>, specOf: (agentType: string) => AgentState | undefined): readonly DependentEdge[] {
    if (this.byName.size === 0) return NONE;
    const out: DependentEdge[] = [];
    const collect = (name: string, toolsOnly: boolean): void => {
      for (const dependent of this.byName.get(name) ?? []) {
        const depends = specOf(dependent)?.spec.depends ?? [];
        depends.forEach((dep, index) => {
          if (dep.name === name && (!toolsOnly || dep.type === "tool")) out.push({ dependent, index, dep });
        });
      }
    };
    collect(agentType, false);
    const seen = new Set([agentType]);
    for (const cap of capabilities) {
      if (seen.has(cap) || !this.byName.has(cap)) continue;
      seen.add(cap);
      collect(cap, true);
    }
    if (out.length === 0) return NONE;
    return out.sort((a, b) => (a.dependent < b.dependent ? -1 : a.dependent > b.dependent ? 1 : a.index - b.index));
  }
}
