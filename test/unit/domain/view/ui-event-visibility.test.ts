/**
 * The web page's event visibility (src/ui/server/event-visibility.ts) on a view: what it
 * decides for events about several agents at once (capabilities), none (alerts), an agent the
 * view does not hold yet, a registered event naming a tenant, and the approval gate's events.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, encodeRecord } from "../../../../src/domain/model/records.js";
import { EventVisibility } from "../../../../src/ui/server/event-visibility.js";
import type { AgentSpec } from "../../../../src/domain/spec/spec.js";
import { cap, makeSpec } from "../../fixtures.js";

let view: RegistryView;
let revision: number;
let waits: number[];
let visibility: EventVisibility;

function register(spec: AgentSpec): void {
  view.apply({ key: agentKey(spec.agent_type), revision: ++revision, operation: "PUT", created: 0, value: encodeRecord({ kind: "agent", spec, registered_at: 0, updated_at: 0 }) });
}

const capabilityEvent = (capability: string, providers: string[]) => ({ type: "registry.capability.changed", subject: capability, data: { capability, change: "updated", providers, revision } });

beforeEach(() => {
  view = new RegistryView();
  revision = 0;
  waits = [];
  visibility = new EventVisibility(view, async (r) => {
    waits.push(r);
    register(makeSpec({ agent_type: "late" }));
  });
  register(makeSpec({ agent_type: "open", capabilities: [cap("both"), cap("open.only")] }));
  register(makeSpec({ agent_type: "hidden", tenant_scope: "acme", capabilities: [cap("both"), cap("acme.only")] }));
});

describe("the page's event visibility", () => {
  it("names only the providers the page may see, and leaves out a capability only a tenant's agents declare", async () => {
    expect(await visibility.shown(capabilityEvent("both", ["hidden", "open"]))).toMatchObject({ data: { capability: "both", providers: ["open"] } });
    expect(await visibility.shown(capabilityEvent("acme.only", ["hidden"]))).toBeNull();
    // Removed: nobody provides it now; the shared agent still declares it, so the page may know.
    expect(await visibility.shown(capabilityEvent("open.only", []))).toMatchObject({ data: { providers: [] } });
    expect(await visibility.shown(capabilityEvent("acme.only", []))).toBeNull();
  });

  it("sends alerts, which are about no agent, to every page", () => {
    const alert = { type: "registry.alert.self_preservation", data: { active: true, overdue: 5, live: 10, ratio: 0.5, threshold: 0.85 } };
    expect(visibility.shownNow(alert)).toBe(alert);
  });

  it("sends the approval gate's events to every page, a tenant's included: the approvals view lists every tenant's specs", () => {
    for (const type of ["registry.agent.pending", "registry.agent.approved", "registry.agent.rejected"]) {
      const event = { type, subject: "hidden", data: { agent_type: "hidden", version: "1.0.0", tenant_scope: "acme", state: "pending", by: null, reason: null, revision } };
      expect(visibility.shownNow(event)).toBe(event);
    }
    // The tenant's other events stay out.
    expect(visibility.shownNow({ type: "registry.agent.status_changed", subject: "hidden", data: { agent_type: "hidden", revision } })).toBeNull();
  });

  it("sends trust changes to every page too (the withheld list is every tenant's), but not a tenant's deprecations", () => {
    const trust = { type: "registry.agent.trust_changed", subject: "hidden", data: { agent_type: "hidden", version: "1.0.0", tenant_scope: "acme", previous_state: "verified", state: "withheld", kid: "k2", publisher: "Acme", reason: "unknown_key", revision } };
    expect(visibility.shownNow(trust)).toBe(trust);
    const deprecated = { type: "registry.agent.deprecated", subject: "hidden", data: { agent_type: "hidden", version: "1.0.0", tenant_scope: "acme", deprecated: true, by: "a", reason: null, successor: null, revision } };
    expect(visibility.shownNow(deprecated)).toBeNull();
  });

  it("waits for the view to reach an event's revision before deciding on an agent it does not hold", async () => {
    const event = { type: "registry.agent.registered", subject: "late", data: { agent_type: "late", tenant_scope: null, revision: revision + 1 } };
    expect(visibility.shownNow(event)).toBeNull();
    expect(await visibility.shown(event)).toBe(event);
    expect(waits).toEqual([revision]);
    // Within the view's revision: decided at once, and an agent it does not hold is left out.
    expect(await visibility.shown({ type: "registry.agent.deregistered", data: { agent_type: "never-seen", revision: 1 } })).toBeNull();
    expect(waits).toHaveLength(1);
  });

  it("leaves out a registered event that names a tenant, whatever the agent type is now", () => {
    expect(visibility.shownNow({ type: "registry.agent.registered", data: { agent_type: "open", tenant_scope: null } })).not.toBeNull();
    expect(visibility.shownNow({ type: "registry.agent.registered", data: { agent_type: "open", tenant_scope: "acme" } })).toBeNull();
    expect(visibility.shownNow({ type: "registry.agent.status_changed", data: { agent_type: "hidden", from: "registered", to: "ready" } })).toBeNull();
  });

  it("decides another region's event on this replica's view of that region, waiting for that region's revision", async () => {
    const usView = new RegistryView();
    const usWaits: number[] = [];
    usView.apply({ key: agentKey("remote"), revision: 7, operation: "PUT", created: 0, value: encodeRecord({ kind: "agent", spec: makeSpec({ agent_type: "remote" }), registered_at: 0, updated_at: 0 }) });
    const regional = new EventVisibility(view, async (r) => void waits.push(r), {
      home: "eu",
      fleetOf: (region) => (region === "us" ? { fleet: usView, waitForView: async (r) => void usWaits.push(r) } : undefined),
    });
    const about = (agentType: string, region: string | undefined, at: number) => ({ type: "registry.agent.status_changed", region, data: { agent_type: agentType, revision: at } });
    // us's agent, known to the view of us only; its revision is us's, ahead of nothing there.
    expect(await regional.shown(about("remote", "us", 7))).not.toBeNull();
    expect(await regional.shown(about("remote", "eu", 1))).toBeNull();
    // Ahead of the view of us: waits on us's revisions, never the home view's.
    await regional.shown(about("remote", "us", 9));
    expect(usWaits).toEqual([9]);
    expect(waits).toEqual([]);
    // Home events (and events with no region) are decided on the home view; an unknown region's are left out.
    expect(regional.shownNow(about("open", "eu", 1))).not.toBeNull();
    expect(regional.shownNow(about("open", undefined, 1))).not.toBeNull();
    expect(regional.shownNow(about("open", "ap", 1))).toBeNull();
  });
});
