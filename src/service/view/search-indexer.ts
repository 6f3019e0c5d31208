/**
 * Keeps the search index in step with the view without ever holding the event loop long.
 * The first `search` after a burst used to index every pending spec in one go: 300 verbose
 * specs held every other query for 13 s (issue 14). Now the work is done one document (one
 * capability) at a time, in slices of at most SLICE_MS, each followed by a turn of the event
 * loop (setImmediate), so queries and heartbeats go between slices.
 *
 * Cold start stays as cheap as before: until the first search, changes are only noted (the
 * index cost 0.4 s of a cold start and 31 MB at 10,000 agent types, docs/performance.md).
 * The first search starts the indexing and waits for it; from then on every change is indexed
 * in the background as it comes, so later searches rarely wait. A search answers once nothing
 * is pending, so its reply reflects the revision it carries.
 */
import { agentTermsOf, SearchIndex } from "../../domain/query/search.js";
import type { AgentSpec } from "../../domain/spec/spec.js";
import type { AgentState } from "../../domain/model/model.js";

/** Longest run of indexing between two turns of the event loop. */
export const SLICE_MS = 10;

/** One agent type being indexed, capability by capability. */
type Job = { agentType: string; spec: AgentSpec; next: number; agentTerms: readonly string[] };

export class SearchIndexer {
  readonly index = new SearchIndex();
  /** Agent types changed and not yet indexed: the spec to index, undefined when gone. */
  private readonly backlog = new Map<string, AgentSpec | undefined>();
  private job: Job | null = null;
  /** Set by the first search: before it, changes are only noted. */
  private active = false;
  private scheduled = false;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly onError: (err: unknown, agentType: string | undefined) => void = () => {}) {}

  /** AgentListener: the view's changes, as they are applied. */
  update(agentType: string, agent: AgentState | undefined): void {
    this.backlog.set(agentType, agent?.spec);
    if (this.active) this.schedule();
  }

  /** True when the index holds exactly what the view holds. */
  get idle(): boolean {
    return this.job === null && this.backlog.size === 0;
  }

  /** Changes not yet indexed (agent types). */
  get pending(): number {
    return this.backlog.size + (this.job ? 1 : 0);
  }

  /**
   * Starts the background indexing (for good), and returns null when nothing is pending, else
   * a promise resolved when nothing was; changes may have come meanwhile, so a caller that
   * needs the index complete asks again: `for (let p = caughtUp(); p; p = caughtUp()) await p`.
   */
  caughtUp(): Promise<void> | null {
    this.active = true;
    if (this.idle) return null;
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.slice());
  }

  private slice(): void {
    this.scheduled = false;
    const end = performance.now() + SLICE_MS;
    while (!this.idle && performance.now() < end) {
      try {
        this.step();
      } catch (err) {
        // The view hands over checked records, so this is a bug: lose this agent's documents, not
        // the loop (a throw out of setImmediate would end the process).
        const agentType = this.job?.agentType;
        this.job = null;
        if (agentType !== undefined) this.index.remove(agentType);
        this.onError(err, agentType);
      }
    }
    if (!this.idle) return this.schedule();
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** One unit of work: a capability of the current job, or the start of the next one. */
  private step(): void {
    const job = this.job;
    if (job) {
      this.index.addCapability(job.agentType, job.next, job.agentTerms);
      if (++job.next >= job.spec.capabilities.length) this.job = null;
      return;
    }
    const [agentType, spec] = this.backlog.entries().next().value as [string, AgentSpec | undefined];
    this.backlog.delete(agentType);
    if (spec === undefined) return this.index.remove(agentType);
    // Status changes come with the same spec object: nothing to do.
    if (this.index.has(agentType, spec)) return;
    this.job = { agentType, spec, next: 0, agentTerms: agentTermsOf(spec) };
    this.index.begin(agentType, spec);
    if (spec.capabilities.length === 0) this.job = null;
  }
}
