/**
 * What the fleet gauges show of agent types, kept as the view tells its listeners of each
 * change: how many types have each status, the most types one tenant holds, and the most
 * instances one type holds. The gauges used to count these with a pass over every agent type
 * every 5 s, which held the event loop for about 60 ms at 100,000 types on a 2-core machine
 * (lookup-scaling's profile, docs/performance.md); reading the tally costs a pass over the
 * distinct tenants and distinct instance counts only.
 */
import type { AgentState } from "../model/model.js";
import type { AgentListener } from "./view.js";

/** One agent type's part in the tally, as it was last told; changed in place. */
type Part = { status: string; tenant: string; instances: number };

export class AgentTally implements AgentListener {
  private readonly parts = new Map<string, Part>();
  private readonly byStatus = new Map<string, number>();
  private readonly typesByTenant = new Map<string, number>();
  /** Instances in one type -> how many types have that many. */
  private readonly typesBySize = new Map<number, number>();

  update(agentType: string, agent: AgentState | undefined): void {
    const part = this.parts.get(agentType);
    if (part) {
      add(this.byStatus, part.status, -1);
      add(this.typesByTenant, part.tenant, -1);
      add(this.typesBySize, part.instances, -1);
    }
    if (!agent) {
      this.parts.delete(agentType);
      return;
    }
    const now = part ?? { status: "", tenant: "", instances: 0 };
    now.status = agent.status;
    now.tenant = agent.spec.tenant_scope ?? "";
    now.instances = agent.instances.size;
    if (!part) this.parts.set(agentType, now);
    add(this.byStatus, now.status, 1);
    add(this.typesByTenant, now.tenant, 1);
    add(this.typesBySize, now.instances, 1);
  }

  /** Agent types with this status. */
  count(status: string): number {
    return this.byStatus.get(status) ?? 0;
  }

  /** The most agent types any one tenant holds (the shared scope counts as one tenant). */
  mostTypesInOneTenant(): number {
    return largestKeyOrCount(this.typesByTenant, "count");
  }

  /** The most instances any one agent type holds. */
  mostInstancesInOneType(): number {
    return largestKeyOrCount(this.typesBySize, "key");
  }
}

/** Adds `by` to a count, dropping it at zero so the maps hold only what is there. */
function add<K>(counts: Map<K, number>, key: K, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
}

function largestKeyOrCount<K>(counts: Map<K, number>, which: "key" | "count"): number {
  let most = 0;
  for (const [k, n] of counts) {
    const v = which === "key" ? (k as number) : n;
    if (v > most) most = v;
  }
  return most;
}
