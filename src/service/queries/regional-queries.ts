/**
 * `lookup` and `discover` in regional mode (docs/protocol.md section 8, "regions"): the entries
 * of the home view and of each other region's read-only view, each named with its `region`, a
 * stale region's marked `"stale": true`, in the order the query's `scope` asks for. `local`: the
 * home region's alone; `prefer_local` (the default): the home region's in the query's order,
 * then the other regions' in that order; `global`: every region's in one order (the home
 * region's first among equals). A remote region's entries are as its mirror last heard them.
 */
import type { AgentState } from "../../domain/model/model.js";
import type { Capability } from "../../domain/spec/spec.js";
import type { QueryScope } from "../../protocol/messages.js";
import { compareProviders } from "../../domain/query/agent-view.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { AgentIndex } from "../../domain/query/agent-index.js";
import type { SearchIndexer } from "../view/search-indexer.js";
import { route, type RouteResult } from "../../domain/query/routing.js";
import { ErrorCode, RegistryError } from "../../domain/errors.js";

export type Match = { agent: AgentState; cap: Capability };
export type RegionalMatch = Match & { region: string; stale: boolean };

/** The home region and the others as this replica follows them; null outside regional mode. */
export type RegionalViews = {
  home: string;
  remote: ReadonlyArray<{ name: string; view: RegistryView; index: AgentIndex; search: SearchIndexer; stale: boolean }>;
};

/** One region's agents as the queries read them: its view, its index for find and route, its search index. */
export type RegionReadings = { view: RegistryView; index: AgentIndex; search: SearchIndexer };

/** Every region's entries the scope asks for, each with its region, in the scope's order of `compare`. */
export function inScope<T>(
  scope: QueryScope | undefined,
  regions: RegionalViews,
  home: RegionReadings,
  entriesIn: (at: RegionReadings) => T[],
  compare: (a: T, b: T) => number,
): Array<T & { region: string; stale: boolean }> {
  const local = entriesIn(home).map((m) => ({ ...m, region: regions.home, stale: false }));
  const wanted = scope ?? "prefer_local";
  const byEntry = (a: T, b: T) => compare(a, b);
  if (wanted === "local") return local.sort(byEntry);
  const remote = regions.remote.flatMap((r) => entriesIn(r).map((m) => ({ ...m, region: r.name, stale: r.stale })));
  // Array.prototype.sort is stable: in `global`, equal entries keep the home region's first.
  if (wanted === "global") return [...local, ...remote].sort(byEntry);
  return [...local.sort(byEntry), ...remote.sort(byEntry)];
}

/** The lookup's providers of every region in scope. */
export function regionalMatches(scope: QueryScope | undefined, regions: RegionalViews, home: RegionReadings, matchesIn: (view: RegistryView) => Match[]): RegionalMatch[] {
  return inScope(scope, regions, home, (at) => matchesIn(at.view), compareProviders);
}

/**
 * `route` in regional mode: each region in scope routed on its own, the winner the first of
 * them in the scope's order of scores (`prefer_local`: this region's best while it has one),
 * the candidates of every region with theirs; null when no region has a route.
 */
export function regionalRoute(scope: QueryScope | undefined, regions: RegionalViews, home: RegionReadings, routeIn: (index: AgentIndex) => RouteResult | null): object | null {
  const legs = inScope(scope, regions, home, (at) => { const r = routeIn(at.index); return r === null ? [] : [r]; }, (a, b) => b.score - a.score);
  const winner = legs[0];
  if (winner === undefined) return null;
  const candidates = legs.flatMap((leg) => leg.candidates.map((c) => ({ ...c, ...regionFields(leg) })));
  if ((scope ?? "prefer_local") === "global") candidates.sort((a, b) => b.score - a.score);
  const { region, stale, candidates: _own, ...best } = winner;
  return { ...best, ...regionFields({ region, stale }), candidates };
}

/** What regional mode adds to an entry: its region, and a stale region's mark. */
export function regionFields(m: { region: string; stale: boolean }): { region: string; stale?: true } {
  return m.stale ? { region: m.region, stale: true } : { region: m.region };
}

/** Room an entry leaves for its region fields when it is cut to fit a page (a region name is one token). */
export const REGION_FIELDS_BYTES = 300;

/** One region's route, or null when it has none (`no_route`); any other refusal is thrown. */
export function routeOrNull(index: AgentIndex, q: Parameters<typeof route>[1], tenant: string | null): RouteResult | null {
  try {
    return route(index, q, tenant);
  } catch (e) {
    if (e instanceof RegistryError && e.code === ErrorCode.NoRoute) return null;
    throw e;
  }
}
