/**
 * The other regions as this replica sees them (docs/architecture.md, "Regions"): for each, a
 * read-only view fed from the local mirror of that region's bucket, and whether the mirror has
 * gone quiet. Nothing here writes or evicts: a remote entry changes only when its home region
 * writes it and the mirror brings the write over. When the mirror stops hearing from its source
 * (a partition, the region down) for longer than the bound, the region is marked stale, its
 * entries kept as they were, and unmarked once the mirror hears from it again.
 */
import type { StoreReader } from "../../domain/ports.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import { guardedInterval } from "../../kit/guarded.js";
import { ViewFeed } from "./view-feed.js";
import { AgentIndex } from "../../domain/query/agent-index.js";
import { SearchIndexer } from "./search-indexer.js";

/** What a mirror says of its own progress; null `sinceContactMs`: it never heard from its source. */
export type MirrorStatus = { lastRevision: number; sinceContactMs: number | null };

/** A remote region's mirror: read like a bucket, and asked how recently it heard from its source. */
export interface RegionSource extends StoreReader {
  progress(): Promise<MirrorStatus>;
}

export type RemoteRegionsDeps = {
  regions: ReadonlyArray<{ name: string; source: RegionSource; view: RegistryView }>;
  log: Logger;
  now: () => number;
  /** How long a mirror may go without hearing from its source before its region is stale. */
  staleAfterMs: number;
  checkIntervalMs?: number;
};

export type RemoteRegionState = {
  readonly name: string;
  readonly view: RegistryView;
  /** The region's agents indexed for find and route, kept by its view as the home index is. */
  readonly index: AgentIndex;
  /** The region's search index: changes only noted until the first search, as the home one. */
  readonly search: SearchIndexer;
  /** True while the mirror has not heard from the region for longer than the bound. */
  readonly stale: boolean;
  /** The home region's revision the view has applied. */
  readonly revision: number;
};

type Followed = { name: string; source: RegionSource; view: RegistryView; index: AgentIndex; search: SearchIndexer; feed: ViewFeed; stale: boolean; lastHeard: number };

export class RemoteRegions {
  private readonly followed: Followed[];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: RemoteRegionsDeps) {
    const started = deps.now();
    this.followed = deps.regions.map(({ name, source, view }) => ({
      name,
      source,
      view,
      index: indexOf(view),
      search: searchOf(view, deps.log.child({ region: name })),
      stale: false,
      lastHeard: started,
      feed: new ViewFeed({
        store: source,
        view,
        log: deps.log.child({ region: name }),
        // Another region's changes are its own to announce: its events reach this region through
        // the global events stream, not from here. Its lease key is its evictor's business.
        onEvents: () => undefined,
        onReserved: () => undefined,
      }),
    }));
  }

  /** Starts following every region; a region's first load is not waited for (it may be cut off). */
  async start(): Promise<void> {
    await Promise.all(this.followed.map((f) => f.feed.start()));
    this.timer = guardedInterval(this.deps.log, "remote region staleness", () => this.check(), this.deps.checkIntervalMs ?? 1000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.followed.map((f) => f.feed.stop()));
  }

  get regions(): RemoteRegionState[] {
    return this.followed.map((f) => ({ name: f.name, view: f.view, index: f.index, search: f.search, stale: f.stale, revision: f.view.revision }));
  }

  /** Waits until `region`'s view has applied `revision` of its home bucket (at most `timeoutMs`). */
  waitForRevision(region: string, revision: number, timeoutMs: number): Promise<unknown> {
    const f = this.followed.find((r) => r.name === region);
    return f ? f.feed.waitForRevision(revision, timeoutMs) : Promise.resolve("unknown region");
  }

  private async check(): Promise<void> {
    const now = this.deps.now();
    await Promise.all(
      this.followed.map(async (f) => {
        try {
          const p = await f.source.progress();
          if (p.sinceContactMs !== null) f.lastHeard = Math.max(f.lastHeard, now - p.sinceContactMs);
        } catch (err) {
          // The local mirror did not answer: nothing new is known of the region; the bound decides.
          this.deps.log.debug({ err, region: f.name }, "could not read the region's mirror status");
        }
        const stale = now - f.lastHeard > this.deps.staleAfterMs;
        if (stale !== f.stale) {
          f.stale = stale;
          if (stale) this.deps.log.warn({ region: f.name, since_ms: now - f.lastHeard }, "region marked stale: its mirror has not heard from it; its entries are kept as they were");
          else this.deps.log.info({ region: f.name }, "region no longer stale: its mirror hears from it again");
        }
      }),
    );
  }
}

/** An index of `view`'s agents, kept up to date by it from its first entry on. */
function indexOf(view: RegistryView): AgentIndex {
  const index = new AgentIndex(view.capabilityIndex);
  view.addListener(index);
  return index;
}

/** A search index of `view`'s agents, fed by it from its first entry on. */
function searchOf(view: RegistryView, log: Logger): SearchIndexer {
  const search = new SearchIndexer((err, agentType) => log.error({ err, agent_type: agentType }, "search indexing failed; the agent type is left out of search"));
  view.addListener(search);
  return search;
}
