/**
 * `lookup` and `discover` in regional mode (docs/protocol.md section 8, "regions"): the entries
 * of the home view and of each other region's read-only view, each named with its `region`, a
 * stale region's marked `"stale": true`, in the order the query's `scope` asks for. `local`: the
 * home region's alone; `prefer_local` (the default): the home region's in the query's order,
 * then the other regions' in that order; `global`: every region's in one order (the home
 * region's first among equals). A remote region's entries are as its mirror last heard them.
 */
import type { AgentState } from "../domain/model/model.js";
import type { Capability } from "../domain/spec/spec.js";
import type { QueryScope } from "../domain/messages.js";
import { compareProviders } from "../domain/query/agent-view.js";
import type { RegistryView } from "../domain/view/view.js";

export type Match = { agent: AgentState; cap: Capability };
export type RegionalMatch = Match & { region: string; stale: boolean };

/** The home region and the others as this replica follows them; null outside regional mode. */
export type RegionalViews = {
  home: string;
  remote: ReadonlyArray<{ name: string; view: RegistryView; stale: boolean }>;
};

/** Every region's entries the scope asks for, each with its region, in the scope's order of `compare`. */
export function inScope<T>(
  scope: QueryScope | undefined,
  regions: RegionalViews,
  home: RegistryView,
  entriesIn: (view: RegistryView) => T[],
  compare: (a: T, b: T) => number,
): Array<T & { region: string; stale: boolean }> {
  const local = entriesIn(home).map((m) => ({ ...m, region: regions.home, stale: false }));
  const wanted = scope ?? "prefer_local";
  const byEntry = (a: T, b: T) => compare(a, b);
  if (wanted === "local") return local.sort(byEntry);
  const remote = regions.remote.flatMap((r) => entriesIn(r.view).map((m) => ({ ...m, region: r.name, stale: r.stale })));
  // Array.prototype.sort is stable: in `global`, equal entries keep the home region's first.
  if (wanted === "global") return [...local, ...remote].sort(byEntry);
  return [...local.sort(byEntry), ...remote.sort(byEntry)];
}

/** The lookup's providers of every region in scope. */
export function regionalMatches(scope: QueryScope | undefined, regions: RegionalViews, home: RegistryView, matchesIn: (view: RegistryView) => Match[]): RegionalMatch[] {
  return inScope(scope, regions, home, matchesIn, compareProviders);
}

/** What regional mode adds to an entry: its region, and a stale region's mark. */
export function regionFields(m: { region: string; stale: boolean }): { region: string; stale?: true } {
  return m.stale ? { region: m.region, stale: true } : { region: m.region };
}
