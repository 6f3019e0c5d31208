/**
 * The named schemas this replica's view holds (PROTOCOL.md section 11.1), fed by the view with
 * the `schemas.<name>.<version>` entries of the bucket, and which agent types refer to each
 * (`used_by`), kept as specs change. Schemas are immutable, so an entry is only ever added;
 * a delete (by hand: the API never deletes) removes it, and specs that use it are then served
 * with the ref unresolved (service/queries/schema-resolution.ts).
 */
import semver from "semver";
import type { StoreEntry } from "../ports.js";
import type { AgentSpec } from "../spec/spec.js";
import { findRefs, refKey, type SchemaSource } from "./schema-refs.js";
import { readSchemaRecord, type SchemaRecord } from "./schema-record.js";
import { ResolvedRefCache } from "./resolved-ref-cache.js";

export type StoredSchema = SchemaRecord & { readonly revision: number };

const NO_USERS: ReadonlySet<string> = new Set();

export class SchemaBook {
  private readonly byKey = new Map<string, StoredSchema>();
  private sortedCache: StoredSchema[] | null = null;
  /** Agent type -> the spec last seen and the schema keys it refers to. */
  private readonly refsOfType = new Map<string, { spec: AgentSpec; keys: readonly string[] }>();
  private readonly usersOfKey = new Map<string, Set<string>>();
  private readonly changeListeners: Array<() => void> = [];
  /** Bumped by every change of the set of schemas: what was resolved under an older one is stale. */
  generation = 0;
  /** Stored schemas already inlined, reused by every resolution while the generation stays (resolved-ref-cache.ts). */
  readonly resolved = new ResolvedRefCache(this);

  /** The schema of `(name, version)`, undefined when this view holds none. */
  readonly source: SchemaSource = (name, version) => this.byKey.get(refKey(name, version))?.schema;

  get size(): number {
    return this.byKey.size;
  }

  get(name: string, version: string): StoredSchema | undefined {
    return this.byKey.get(refKey(name, version));
  }

  /** Told after every change of the set of schemas (the lookup cache drops its replies). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Applies an entry of `schemas.<name>.<version>`; returns what is wrong with an unreadable record (which reads as absent). */
  apply(name: string, version: string, entry: StoreEntry): string | undefined {
    const key = refKey(name, version);
    const read = entry.operation === "PUT" ? readSchemaRecord(entry.value, name, version) : null;
    if (read === null || typeof read === "string") {
      if (this.byKey.delete(key)) this.changed();
      return read ?? undefined;
    }
    this.byKey.set(key, { ...read, revision: entry.revision });
    this.changed();
    return undefined;
  }

  /** Every schema, by name then version (semver order). */
  sorted(): readonly StoredSchema[] {
    this.sortedCache ??= [...this.byKey.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : semver.compare(a.version, b.version)));
    return this.sortedCache;
  }

  /** Agent types whose stored spec refers to this schema directly, whatever their status. */
  usedBy(name: string, version: string): ReadonlySet<string> {
    return this.usersOfKey.get(refKey(name, version)) ?? NO_USERS;
  }

  /** AgentListener of the view: a changed spec is a new object, so refs are found again only then. */
  update(agentType: string, agent: { readonly spec: AgentSpec } | undefined): void {
    const before = this.refsOfType.get(agentType);
    if (agent && before?.spec === agent.spec) return;
    for (const key of before?.keys ?? []) {
      const users = this.usersOfKey.get(key);
      users?.delete(agentType);
      if (users?.size === 0) this.usersOfKey.delete(key);
    }
    if (!agent) {
      this.refsOfType.delete(agentType);
      return;
    }
    const keys = refKeysOf(agent.spec);
    this.refsOfType.set(agentType, { spec: agent.spec, keys });
    for (const key of keys) {
      let users = this.usersOfKey.get(key);
      if (!users) this.usersOfKey.set(key, (users = new Set()));
      users.add(agentType);
    }
  }

  clear(): void {
    this.byKey.clear();
    this.refsOfType.clear();
    this.usersOfKey.clear();
    this.changed();
  }

  private changed(): void {
    this.sortedCache = null;
    this.generation++;
    for (const l of this.changeListeners) l();
  }
}

/** The distinct schema keys a spec's capability schemas refer to directly. */
export function refKeysOf(spec: AgentSpec): string[] {
  const keys = new Set<string>();
  for (const cap of spec.capabilities) {
    for (const schema of [cap.input_schema, cap.output_schema]) {
      if (typeof schema !== "object") continue;
      for (const r of findRefs(schema).refs) keys.add(refKey(r.name, r.version));
    }
  }
  return [...keys];
}
