/**
 * `lookup` in regional mode (docs/protocol.md section 8, "regions"): the providers of the home
 * view and of each other region's read-only view, each named with its `region`, a stale region's
 * marked `"stale": true`, in the order the query's `scope` asks for. `local`: the home region's
 * alone; `prefer_local` (the default): the home region's in lookup order, then the other
 * regions' in lookup order; `global`: every region's in one lookup order (the home region's
 * first among equals). A remote region's entries are as its mirror last heard them.
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

export function regionalMatches(
  scope: QueryScope | undefined,
  regions: RegionalViews,
  home: RegistryView,
  matchesIn: (view: RegistryView) => Match[],
): RegionalMatch[] {
  const local = matchesIn(home).map((m) => ({ ...m, region: regions.home, stale: false }));
  const wanted = scope ?? "prefer_local";
  if (wanted === "local") return local.sort(compareProviders);
  const remote = regions.remote.flatMap((r) => matchesIn(r.view).map((m) => ({ ...m, region: r.name, stale: r.stale })));
  // Array.prototype.sort is stable: in `global`, equal providers keep the home region's first.
  if (wanted === "global") return [...local, ...remote].sort(compareProviders);
  return [...local.sort(compareProviders), ...remote.sort(compareProviders)];
}

/** What regional mode adds to a provider: its region, and a stale region's mark. */
export function regionFields(m: RegionalMatch): { region: string; stale?: true } {
  return m.stale ? { region: m.region, stale: true } : { region: m.region };
}
