/**
 * Which events the web page's stream (/ui/events) may carry, and what of them: those about
 * agents the page's own queries can show (issue 35, item 9). The page asks on the plain
 * subjects, so it sees the fleet as a request with no tenant does, shared agents only; the
 * decision is the queries' own rule (`visibleTo` of domain/model/model.ts) applied to this
 * replica's view, not a second one.
 *
 * - An event about an agent type (`data.agent_type`: registered, deregistered, status,
 *   heartbeats, dependency events) goes only when the view holds that agent type and the
 *   page may see it; a registered event also only when the tenant_scope it names may be seen.
 *   An agent type the view does not hold (never seen here, or gone past retention) is one
 *   `get` answers not_found for: its events are left out too.
 * - A capability event goes only when an agent type the page may see declares that
 *   capability (in any state, so its removal is shown), and names only such providers: a
 *   capability of another tenant's agents alone stays theirs, name included.
 * - Events about no agent (alerts) go to every page.
 * - The approval gate's events (pending, approved, rejected) go to every page, whatever the
 *   tenant: the page's approvals view lists every tenant's specs in the gate (the registry's
 *   `registry.approval.pending`, as `agent-registry pending` does), and these events are what
 *   keeps it live. They carry what that view shows: type, version, tenant, state, who and why.
 *
 * An event can arrive before this replica's view applied the change that caused it (another
 * replica published it): one whose `revision` is ahead of the view waits for the view first,
 * up to VIEW_WAIT_MS, then is decided on what the view holds.
 *
 * In regional mode the page reads the region's global stream, every region's events: an event
 * of another region (its `region` attribute) is decided on this replica's read-only view of that
 * region, whose revisions are that region's; one of a region this replica does not follow is
 * left out, as an agent type the view does not hold.
 */
import { scopeVisibleTo, visibleTo, type AgentState } from "../../domain/model/model.js";
import { EventType } from "../../protocol/events.js";

/** What the decision reads of this replica's view. */
export type PageFleet = {
  readonly revision: number;
  get(agentType: string): AgentState | undefined;
  providersOf(capability: string): ReadonlySet<string>;
};

/** Resolves once the view applied `revision` or `timeoutMs` passed, whichever first. */
export type ViewWait = (revision: number, timeoutMs: number) => Promise<unknown>;

/** A region's fleet as this replica follows it, and how to wait for that region's revisions. */
export type RegionFleet = { readonly fleet: PageFleet; readonly waitForView: ViewWait };

/** Another region's fleet by name (regional mode); undefined for a region not followed. */
export type OtherRegions = { readonly home: string; fleetOf(region: string): RegionFleet | undefined };

/** How long one event may wait for the view to apply its revision. */
export const VIEW_WAIT_MS = 1000;

/** The page's queries name no tenant: it sees shared agents only. */
const PAGE_TENANT = null;

/**
 * The approval gate's events and trust changes, shown to every page: the approvals view lists
 * every tenant's pending, rejected and withheld specs, and these events (type, version, tenant,
 * state, who and why, or the key and reason) carry no more than it shows.
 */
const APPROVAL_EVENTS: ReadonlySet<unknown> = new Set([EventType.AgentPending, EventType.AgentApproved, EventType.AgentRejected, EventType.AgentTrustChanged]);

type Fields = Record<string, unknown>;

export class EventVisibility {
  private readonly home: RegionFleet;

  constructor(
    fleet: PageFleet,
    waitForView: ViewWait,
    private readonly others?: OtherRegions,
  ) {
    this.home = { fleet, waitForView };
  }

  /** The event as the page may see it (providers it may not see removed), or null when the page may not see it at all. */
  async shown(event: Fields): Promise<Fields | null> {
    const judge = this.fleetFor(event);
    if (judge === undefined) return null;
    const revision = dataOf(event)?.["revision"];
    if (typeof revision === "number" && revision > judge.fleet.revision) await judge.waitForView(revision, VIEW_WAIT_MS);
    return shownIn(judge.fleet, event);
  }

  /** The same decision on the view as it is (heartbeats carry no revision to wait for). */
  shownNow(event: Fields): Fields | null {
    const judge = this.fleetFor(event);
    return judge === undefined ? null : shownIn(judge.fleet, event);
  }

  /** The fleet that decides an event: its home region's, as this replica follows it. */
  private fleetFor(event: Fields): RegionFleet | undefined {
    const region = event["region"];
    if (typeof region !== "string" || this.others === undefined || region === this.others.home) return this.home;
    return this.others.fleetOf(region);
  }
}

function shownIn(fleet: PageFleet, event: Fields): Fields | null {
  const data = dataOf(event);
  if (data === undefined || APPROVAL_EVENTS.has(event["type"])) return event;
  const visible = (agentType: string): boolean => {
    const agent = fleet.get(agentType);
    return agent !== undefined && visibleTo(agent, PAGE_TENANT);
  };
  const agentType = data["agent_type"];
  if (typeof agentType === "string") {
    const scope = data["tenant_scope"];
    if (!visible(agentType) || (typeof scope === "string" && !scopeVisibleTo(scope, PAGE_TENANT))) return null;
    return withVisibleProviders(event, data, visible);
  }
  const capability = data["capability"];
  if (typeof capability === "string") {
    if (![...fleet.providersOf(capability)].some(visible)) return null;
    return withVisibleProviders(event, data, visible);
  }
  return event;
}

function dataOf(event: Fields): Fields | undefined {
  const data = event["data"];
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Fields) : undefined;
}

/** The event with `data.providers` cut to the agent types the page may see (unchanged when it has none to cut). */
function withVisibleProviders(event: Fields, data: Fields, visible: (agentType: string) => boolean): Fields {
  const providers = data["providers"];
  if (!Array.isArray(providers)) return event;
  const kept = providers.filter((p): p is string => typeof p === "string" && visible(p));
  if (kept.length === providers.length) return event;
  return { ...event, data: { ...data, providers: kept } };
}
