/**
 * `registry.capability.changed` derivation: what a change to one agent did to the set of
 * ready providers, or to the schema, of each of its capabilities. `added` when the first ready
 * provider appears, `removed` when the last one goes, `updated` otherwise.
 */
import { AgentStatus } from "../model/model.js";
import { isRoutable, type Approval } from "../trust/approval-policy.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { DerivedEvent } from "./events.js";
import type { AgentSpec, Capability } from "../spec/spec.js";

/** Ready capabilities by name (empty unless the agent is ready and its spec routable, approval-policy.ts): the before/after of a change. */
export type ReadyCapabilities = ReadonlyMap<string, Capability>;

const NONE: ReadyCapabilities = new Map();

export function readyCapabilities(agent: { status: AgentStatus; caps: ReadyCapabilities; approval?: Approval | undefined; trust_lapse?: TrustLapse | undefined } | undefined): ReadyCapabilities {
  return agent !== undefined && agent.status === AgentStatus.Ready && isRoutable(agent) ? agent.caps : NONE;
}

export function capabilitiesByName(spec: AgentSpec): Map<string, Capability> {
  const caps = new Map<string, Capability>();
  for (const c of spec.capabilities) caps.set(c.name, c);
  return caps;
}

export function capabilityChanges(
  agentType: string,
  before: ReadyCapabilities,
  after: ReadyCapabilities,
  revision: number,
  readyProviders: (capability: string) => string[],
): DerivedEvent[] {
  // The same map means the same spec and readiness: a plain heartbeat costs nothing here.
  if (before === after) return [];
  const events: DerivedEvent[] = [];
  const names = new Set([...before.keys(), ...after.keys()]);
  for (const name of [...names].sort()) {
    const had = before.get(name);
    const has = after.get(name);
    if (sameCapability(had, has)) continue;
    const providers = readyProviders(name);
    const othersReady = providers.filter((p) => p !== agentType).length;
    let change: "added" | "removed" | "updated";
    if (had === undefined) change = othersReady === 0 ? "added" : "updated";
    else if (has === undefined) change = othersReady === 0 ? "removed" : "updated";
    else change = "updated";
    events.push({ type: "registry.capability.changed", subject: name, data: { capability: name, change, providers, revision } });
  }
  return events;
}

/**
 * Whether a coordinator sees the same capability: description and schemas. The view used to
 * keep this signature as a JSON string per capability, which was 30 MB at 10,000 agent types
 * (docs/performance.md); it is now computed only when a spec changes, since a capability
 * object of an unchanged spec is the very same object.
 */
function sameCapability(a: Capability | undefined, b: Capability | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return JSON.stringify([a.description, a.input_schema, a.output_schema]) === JSON.stringify([b.description, b.input_schema, b.output_schema]);
}
