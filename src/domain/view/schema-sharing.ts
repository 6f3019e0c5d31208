/**
 * Points the capability schemas of every agent type in the view at one shared copy of equal
 * schemas (JsonInterner), in batches after the fact rather than while the view applies
 * entries: at a cold start with 10,000 types sharing is 200 ms of JSON.stringify that loading
 * the view would otherwise wait for (docs/performance.md). The spec objects stay the same
 * (only their schema fields change, to equal values), so nothing that indexes them sees a change.
 */
import { JsonInterner } from "./json-interner.js";
import type { Mutable } from "../model/model.js";
import type { AgentSpec, Capability } from "../spec/spec.js";

/** New distinct schemas after which share() drops the copies no spec uses any more. */
export const FORGET_SCHEMAS_AFTER = 1000;

export class SchemaSharing {
  private readonly interner = new JsonInterner();
  /** Distinct schemas held after the last time unused ones were dropped. */
  private kept = 0;
  /** Agent types whose spec arrived or changed since their schemas were last shared. */
  private readonly pending = new Set<string>();

  /** The spec of `agentType` arrived or changed. */
  changed(agentType: string): void {
    this.pending.add(agentType);
  }

  /** `agentType` left the view. */
  gone(agentType: string): void {
    this.pending.delete(agentType);
  }

  clear(): void {
    this.pending.clear();
  }

  /**
   * Shares the schemas of up to `limit` pending agent types, reading their current spec with
   * `specOf` (undefined: gone); returns how many types are still pending. Every
   * FORGET_SCHEMAS_AFTER new distinct schemas it first drops the copies that none of
   * `allSpecs` uses: specs replaced or gone leave copies nobody points at.
   */
  share(limit: number, specOf: (agentType: string) => AgentSpec | undefined, allSpecs: () => Iterable<AgentSpec>): number {
    if (this.interner.size >= this.kept + FORGET_SCHEMAS_AFTER) {
      const used = new Set<unknown>();
      for (const spec of allSpecs()) for (const c of spec.capabilities) used.add(c.input_schema).add(c.output_schema);
      this.interner.retainOnly(used);
      this.kept = this.interner.size;
    }
    for (const agentType of this.pending) {
      if (limit-- <= 0) break;
      this.pending.delete(agentType);
      const spec = specOf(agentType);
      if (!spec) continue;
      for (const c of spec.capabilities as Array<Mutable<Capability>>) {
        c.input_schema = this.interner.intern(c.input_schema);
        c.output_schema = this.interner.intern(c.output_schema);
      }
    }
    return this.pending.size;
  }

  /** Distinct schemas held (for tests and metrics). */
  get distinct(): number {
    return this.interner.size;
  }
}
