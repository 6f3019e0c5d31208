/**
 * Makes the dependency cycle check and the spec write it admits one step, across replicas
 * (PROTOCOL.md section 11.2; docs/architecture.md, "Dependency cycles across replicas"). A
 * registration whose spec write can add an edge to the graph (domain/graph/graph-guard.ts,
 * changesGraph) runs its check and its spec write through `admitted`: one at a time on this
 * replica, and on the graph key with compare-and-set across replicas. The check reads the
 * view caught up to the key's revision, plus the specs the key says are on their way; a lost
 * compare-and-set means another registration took its turn meanwhile, so it reads and checks
 * again.
 */
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import { cycleRefusal, findCycle } from "../../domain/graph/dependency-checks.js";
import { GRAPH_KEY, decodeGraphRecord, encodeGraphRecord, intentOf, nextRecord, settled, withoutIntent, type GraphRecord } from "../../domain/graph/graph-guard.js";
import { StoreConflictError, type Store } from "../../domain/ports.js";
import type { AgentSpec } from "../../domain/spec/spec.js";
import type { RegistryView } from "../../domain/view/view.js";

/** Lost compare-and-sets on the graph key in one turn before the registration is retried as a lost write race. */
export const MAX_GRAPH_ATTEMPTS = 5;
/** Registrations that may wait for their turn on one replica; past it: 503 at once. */
export const MAX_GRAPH_WAITERS = 256;

export type DependencyGuardDeps = {
  store: Store;
  view: RegistryView;
  /** Resolves true once the view has applied `revision` (false: it did not within a bounded wait). */
  viewAt: (revision: number) => Promise<boolean>;
  /** Told of every lost compare-and-set on the graph key (the store-conflicts metric). */
  onConflict?: () => void;
  /** Told of intents dropped to keep the record within its bounds (graph-guard.ts, nextRecord). */
  onDropped?: (n: number) => void;
};

/** The spec write a turn admits: returns the revision the spec record holds once written. */
export type SpecWrite = () => Promise<number>;

export class DependencyGuard {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;
  /** The latest revision this replica's turns wrote: the next turn's check waits for its view to hold it. */
  private lastWritten = 0;

  constructor(private readonly deps: DependencyGuardDeps) {}

  /**
   * Checks `spec` (expecting the agent key at `expected`) against the graph as the store will
   * hold it, records the intent under `id`, and runs `write`, in this replica's turn. Throws
   * the cycle refusal, a StoreConflictError after MAX_GRAPH_ATTEMPTS lost turns (the caller
   * retries as for any lost race), or `unavailable` when the view cannot catch up.
   */
  async admitted(spec: AgentSpec, expected: number, id: string, write: SpecWrite): Promise<number> {
    if (this.waiting >= MAX_GRAPH_WAITERS) {
      throw new RegistryError(ErrorCode.Unavailable, `${this.waiting} registrations that change the dependency graph already wait on this replica; retry`);
    }
    this.waiting++;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      await this.admit(spec, expected, id);
      const revision = await write();
      this.lastWritten = Math.max(this.lastWritten, revision);
      return revision;
    } finally {
      this.waiting--;
      release();
    }
  }

  /**
   * Takes back the intent `id` of a registration whose spec write did not land: else it would
   * count as on its way until its agent key is written. Best effort (a lost race leaves it).
   */
  async withdraw(id: string): Promise<void> {
    const entry = await this.deps.store.get(GRAPH_KEY);
    if (!entry || entry.operation !== "PUT") return;
    const record = withoutIntent(decodeGraphRecord(entry.value), id);
    if (record) await this.deps.store.write(GRAPH_KEY, encodeGraphRecord(record), entry.revision);
  }

  private async admit(spec: AgentSpec, expected: number, id: string): Promise<void> {
    const { store, view } = this.deps;
    for (let attempt = 1; ; attempt++) {
      const entry = await store.get(GRAPH_KEY);
      const revision = entry?.operation === "PUT" ? entry.revision : 0;
      const stored: GraphRecord = entry?.operation === "PUT" ? decodeGraphRecord(entry.value) : { kind: "graph", intents: [] };
      // Every turn taken before this one wrote the key before its spec: a view at the key's
      // revision holds those whose spec it settled, and the key lists the others.
      const target = Math.max(entry?.revision ?? 0, this.lastWritten);
      if (!(await this.deps.viewAt(target))) {
        throw new RegistryError(ErrorCode.Unavailable, `the view has not applied revision ${target} of the store in time to check dependencies; retry`);
      }
      const pending = stored.intents.filter((i) => i.id !== id && !settled(i, view));
      const cycle = findCycle(view, spec, pending);
      if (cycle) throw cycleRefusal(cycle);
      const { record, dropped } = nextRecord(pending, intentOf(spec, expected, id));
      if (dropped > 0) this.deps.onDropped?.(dropped);
      try {
        this.lastWritten = Math.max(this.lastWritten, await store.write(GRAPH_KEY, encodeGraphRecord(record), revision));
        return;
      } catch (e) {
        if (!(e instanceof StoreConflictError)) throw e;
        this.deps.onConflict?.();
        if (attempt >= MAX_GRAPH_ATTEMPTS) throw e;
      }
    }
  }
}
