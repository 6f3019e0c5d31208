/**
 * The queries about agent types as registered (PROTOCOL.md sections 2, 10.3 and 11.4): `get`
 * and `list` show them, `card` and `toolspec` export one, `check` judges a payload against one
 * provider's schema. A tenant's agents are invisible to other tenants.
 */
import { decodeCursor, indexAfter, nextCursor, takePage } from "../../domain/query/page.js";
import { AGENT_TYPE_RE, INSTANCE_ID_RE } from "../../protocol/ids.js";
import { agentView, compareProviders } from "../../domain/query/agent-view.js";
import { offeredTo, ofKind } from "../../domain/query/filters.js";
import { notFound } from "../../domain/errors.js";
import { cardQuery, checkQuery, getQuery, listQuery, toolspecQuery } from "../../domain/messages.js";
import { AgentStatus, visibleTo, type AgentState } from "../../domain/model/model.js";
import type { Capability } from "../../domain/spec/spec.js";
import type { RegistryView } from "../../domain/view/view.js";
import { exportCard } from "../../domain/interop/a2a/index.js";
import { exportToolspec } from "../../domain/interop/mcp/index.js";
import { isRoutable } from "../../domain/trust/approval-policy.js";
import { defineQuery, type Tenant } from "./query-entry.js";

/** get, list, card, toolspec and check: their bodies and answers. */
export const agentQueries = {
  get: defineQuery({
    body: getQuery,
    answer(q, tenant, at) {
      const agent = visibleAgent(at.view, q.agent_type, tenant);
      const after = q.instances_cursor ? decodeCursor(q.instances_cursor, INSTANCE_ID_RE, "instances_cursor") : undefined;
      const page = { maxBytes: at.listBytes(), ...(q.instances_limit !== undefined ? { limit: q.instances_limit } : {}), ...(after !== undefined ? { after } : {}) };
      return { agent: agentView(agent, page) };
    },
  }),

  list: defineQuery({
    body: listQuery,
    answer(q, tenant, at) {
      const statuses = q.status ? new Set<string>(q.status) : null;
      // Named types: the whole fleet's order (agent types are ASCII, so sort() is it) and cursor.
      const sorted = q.agent_types ? [...new Set(q.agent_types)].sort() : at.index.sortedTypes();
      const start = q.cursor ? indexAfter(sorted, decodeCursor(q.cursor, AGENT_TYPE_RE)) : 0;
      const page = takePage(
        sorted.slice(start),
        (type) => type,
        (type, bytesLeft) => {
          const agent = at.view.get(type);
          if (!agent || !visibleTo(agent, tenant)) return null;
          if (statuses ? !statuses.has(agent.status) : agent.status === AgentStatus.Deregistered) return null;
          if (q.owner_team !== undefined && agent.spec.owner_team !== q.owner_team) return null;
          if (q.capability !== undefined && !agent.spec.capabilities.some((c) => c.name === q.capability)) return null;
          if (!ofKind(agent, q.kind)) return null;
          if (q.tags && !Object.entries(q.tags).every(([k, v]) => agent.spec.tags[k] === v)) return null;
          return agentView(agent, { maxBytes: bytesLeft, ...(q.instances_limit !== undefined ? { limit: q.instances_limit } : {}) });
        },
        { limit: q.limit ?? 100, maxBytes: at.listBytes() },
      );
      return { agents: page.items, next_cursor: nextCursor(page.next_cursor) };
    },
  }),

  // Exports (PROTOCOL.md section 10.3): any agent, whatever it registered with; no liveness.
  card: defineQuery({
    body: cardQuery,
    answer(q, tenant, at) {
      const card = exportCard(approvedAgent(at.view, q.agent_type, tenant).spec, q.a2a_version ?? "1.0");
      const signer = at.cardSigner;
      return signer ? signer.sign(card).then((signed) => ({ card: signed })) : { card };
    },
  }),

  toolspec: defineQuery({
    body: toolspecQuery,
    answer(q, tenant, at) {
      return exportToolspec(at.resolution.spec(approvedAgent(at.view, q.agent_type, tenant).spec));
    },
  }),

  // Section 11.4: an answer, not a refusal, for a payload that breaks the schema. The
  // validation runs in a worker thread; one past its budget is refused (payload-checks.ts).
  check: defineQuery({
    body: checkQuery,
    answer(q, tenant, at, data) {
      const direction = q.direction ?? "input";
      const { agent, cap } = checkedProvider(at.view, q.capability, q.agent_type, tenant);
      const schema = at.resolution.forCheck(direction === "input" ? cap.input_schema : cap.output_schema);
      const checked = at.payloads.check(schema, { value: q.payload, request: data }, direction);
      return checked.then((errors) => ({ valid: errors.length === 0, errors, agent_type: agent.agent_type, version: agent.spec.version }));
    },
  }),
};

/** The agent type as `tenant` sees it, else `not_found` (a tenant's agents are invisible to others). */
export function visibleAgent(view: RegistryView, agentType: string, tenant: Tenant): AgentState {
  const agent = view.get(agentType);
  if (!agent || !visibleTo(agent, tenant)) throw notFound(`agent type ${agentType} is not registered`);
  return agent;
}

/**
 * The agent type as `visibleAgent` finds it, for exports (`card`, `toolspec`): a spec that
 * waits for an operator's approval, or was rejected, is not exported, so neither the HTTP
 * documents nor the registry's signature on a card vouch for it (docs/trust.md).
 */
function approvedAgent(view: RegistryView, agentType: string, tenant: Tenant): AgentState {
  const agent = visibleAgent(view, agentType, tenant);
  if (!isRoutable(agent)) {
    if (agent.trust_lapse?.state === "withheld") {
      throw notFound(`agent type ${agentType}'s spec is withheld: its signature no longer verifies against tenant trust roots that require one (${agent.trust_lapse.reason}); it is not exported`);
    }
    const why = agent.approval?.state === "rejected" ? "was rejected by an operator" : "waits for an operator's approval";
    throw notFound(`agent type ${agentType}'s spec ${why}: it is not exported until approved`);
  }
  return agent;
}

/**
 * The provider whose schema a payload is checked against: the one asked for, else the one a
 * lookup would list first, ready providers before those not yet ready (deregistered types
 * provide nothing). Always one agent, so a reply names whose schema it applied.
 */
function checkedProvider(view: RegistryView, capability: string, agentType: string | undefined, tenant: Tenant): { agent: AgentState; cap: Capability } {
  if (agentType !== undefined) {
    const agent = visibleAgent(view, agentType, tenant);
    const cap = agent.spec.capabilities.find((c) => c.name === capability);
    if (!cap) throw notFound(`agent type ${agentType} does not provide capability ${capability}`);
    return { agent, cap };
  }
  const matches: Array<{ agent: AgentState; cap: Capability }> = [];
  for (const type of view.providersOf(capability)) {
    const agent = view.get(type);
    if (!agent || agent.status === AgentStatus.Deregistered || !offeredTo(agent, tenant)) continue;
    const cap = agent.spec.capabilities.find((c) => c.name === capability);
    if (cap) matches.push({ agent, cap });
  }
  const notReady = (m: { agent: AgentState }): number => (m.agent.status === AgentStatus.Ready ? 0 : 1);
  matches.sort((a, b) => notReady(a) - notReady(b) || compareProviders(a, b));
  if (matches.length === 0) throw notFound(`no registered agent provides capability ${capability}`);
  return matches[0]!;
}
