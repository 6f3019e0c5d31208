/**
 * /ui/api/*: the JSON the page reads, answered with the queries the CLI sends, through the
 * SDK's RegistryClient: the page has no source of truth of its own. Lists are cut to what a
 * row shows, so a page of 100 agent types stays small whatever their specs hold.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { RegistryClient } from "../../client/registry-client.js";
import type { AgentView, GraphReply, ListRequest } from "../../client/types.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { AgentStatus } from "../../protocol/states.js";
import { AGENT_KINDS, type AgentKind } from "../../protocol/spec.js";
import { deprecationText, holdOf, type FleetRow, type FleetSummary } from "../shared.js";
import { RATE_RANGES, requestHistory, requestRates } from "./history.js";
import { lastHeard } from "./last-heard.js";
import { pageGraph } from "./graph-api.js";
import { pageApprovals } from "./approvals-api.js";

export type ApiSettings = {
  client: RegistryClient;
  nc: NatsConnection;
  prefix: string;
  version: string;
  missedHeartbeats: number;
  heartbeatEvents: boolean;
  historyTimeoutMs: number;
  /** The events stream, read for deregistered agent types' last heartbeats. */
  stream: string;
  /** The client for a tenant's view (`registry.tenant.<tenant>.<op>`), or the shared one for undefined. */
  clientFor: (tenant: string | undefined) => RegistryClient;
  /** The fleet at a glance (fleet-summary.ts). */
  summary: () => Promise<FleetSummary>;
};

/** A reply: its HTTP status and JSON body. */
export type ApiReply = { status: number; body: unknown };

export const PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 500;
const STATUSES = new Set<string>(Object.values(AgentStatus));
const INSTANCES_SHOWN = 200;

export class BadRequest extends Error {}

export function fleetRow(a: AgentView): FleetRow {
  return {
    agent_type: a.agent_type,
    display_name: a.display_name ?? null,
    description: a.description.slice(0, 200),
    status: a.status,
    kind: a.kind,
    version: a.version,
    // From the instances the reply carries (one page of them for a very large type).
    ready: a.instances.filter((i) => i.status === "ready").length,
    instances: a.instance_count,
    last_heartbeat: a.last_heartbeat,
    tenant_scope: a.tenant_scope,
    owner_team: a.owner_team,
    // Only a spec that is not routable says so: pending or rejected, or withheld by trust (docs/trust.md).
    approval: holdOf(a),
    deprecated: deprecationText(a.deprecated)?.slice(0, 500) ?? null,
  };
}

export async function answerApi(s: ApiSettings, route: string, q: URLSearchParams): Promise<ApiReply> {
  const minRevision = intParam(q, "min_revision", 0, Number.MAX_SAFE_INTEGER);
  const opts = minRevision === undefined ? {} : { minRevision };
  if (route === "info") {
    return ok({ version: s.version, prefix: s.prefix, missed_heartbeats: s.missedHeartbeats, heartbeat_events: s.heartbeatEvents, now: new Date().toISOString() });
  }
  if (route === "summary") return ok(await s.summary());
  if (route === "approvals") return ok(await pageApprovals(s.client, q, minRevision));
  if (route === "graph") return ok(await pageGraph(s.clientFor, q, minRevision));
  if (route === "mirror") {
    // Whether an audit mirror answers (the charts' longer ranges need one): one event asked for, none relayed.
    const page = await requestHistory(s.nc, s.prefix, { limit: 1 }, s.historyTimeoutMs);
    return ok(page.available ? { available: true } : { available: false, reason: page.reason });
  }
  if (route === "rates") {
    const range = q.get("range") ?? "";
    if (!Object.hasOwn(RATE_RANGES, range)) throw new BadRequest(`range: one of ${Object.keys(RATE_RANGES).join(", ")} (the last hour comes from the events stream)`);
    return ok(await requestRates(s.nc, s.prefix, range, Date.now(), s.historyTimeoutMs));
  }
  if (route === "agents") {
    const req: ListRequest = { limit: intParam(q, "limit", 1, MAX_PAGE_SIZE) ?? PAGE_SIZE };
    const status = q.get("status");
    if (status) {
      const list = status.split(",");
      if (!list.every((x) => STATUSES.has(x))) throw new BadRequest(`status: one or more of ${[...STATUSES].join(", ")}`);
      req.status = list as AgentStatus[];
    }
    const kind = q.get("kind");
    if (kind) {
      if (!(AGENT_KINDS as readonly string[]).includes(kind)) throw new BadRequest(`kind: one of ${AGENT_KINDS.join(", ")}`);
      req.kind = kind as AgentKind;
    }
    const cursor = q.get("cursor");
    if (cursor) req.cursor = cursor.slice(0, 1024);
    const page = await s.client.list(req, opts);
    return ok({ agents: await withLastHeard(s, page.agents.map(fleetRow)), next_cursor: page.next_cursor, revision: page.revision });
  }
  if (route === "search") {
    const query = (q.get("q") ?? "").trim();
    if (query === "" || query.length > 256) throw new BadRequest("q: 1 to 256 characters");
    const found = await s.client.search({ query, limit: intParam(q, "limit", 1, 100) ?? 50 }, opts);
    const types = [...new Set(found.results.map((r) => r.agent_type))];
    // The rows of the agent types found, by `get`, as `agent-registry get` would show them.
    const agents = await Promise.all(types.map((t) => s.client.get({ agent_type: t, instances_limit: INSTANCES_SHOWN }, { minRevision: found.revision }).then((r) => fleetRow(r.agent), () => null)));
    return ok({ results: found.results, agents: await withLastHeard(s, agents.filter((a) => a !== null)), revision: found.revision });
  }
  const agent = /^agents\/([^/]+)(\/history|\/graph)?$/.exec(route);
  if (agent) {
    const agentType = decodeURIComponent(agent[1]!);
    if (!AGENT_TYPE_RE.test(agentType)) throw new BadRequest("not an agent type");
    if (agent[2] === undefined) {
      const reply = await s.client.get({ agent_type: agentType, instances_limit: INSTANCES_SHOWN }, opts);
      if (reply.agent.last_heartbeat === null && reply.agent.status === AgentStatus.Deregistered) {
        return ok({ ...reply, agent: { ...reply.agent, last_heartbeat: await lastHeard(s.nc, s.prefix, s.stream, agentType, s.historyTimeoutMs) } });
      }
      return ok(reply);
    }
    if (agent[2] === "/graph") {
      // One step each way, as `agent-registry graph` asks: what it depends on, and what depends on it.
      const [deps, users] = await Promise.all([
        s.client.graph({ agent_type: agentType, direction: "dependencies", depth: 1 }, opts),
        s.client.graph({ agent_type: agentType, direction: "dependents", depth: 1 }, opts),
      ]);
      const others = (nodes: GraphReply["nodes"]) => nodes.filter((n) => n.name !== agentType).map(({ name, kind, version, state }) => ({ name, kind, version, state }));
      return ok({ dependencies: others(deps.nodes), dependents: others(users.nodes), problems: [...deps.problems, ...users.problems].slice(0, 20) });
    }
    const cursor = q.get("cursor");
    const page = await requestHistory(s.nc, s.prefix, { agent_type: agentType, limit: 100, ...(cursor ? { cursor: cursor.slice(0, 1024) } : {}) }, s.historyTimeoutMs);
    return ok(page);
  }
  return { status: 404, body: { error: { code: "not_found", message: `no route /ui/api/${route}` } } };
}

/** Deregistered rows get their last heartbeat from their last removal event (last-heard.ts), read together. */
async function withLastHeard(s: ApiSettings, rows: FleetRow[]): Promise<FleetRow[]> {
  return Promise.all(
    rows.map(async (r) => (r.last_heartbeat === null && r.status === AgentStatus.Deregistered ? { ...r, last_heartbeat: await lastHeard(s.nc, s.prefix, s.stream, r.agent_type, s.historyTimeoutMs) } : r)),
  );
}

const ok = (body: unknown): ApiReply => ({ status: 200, body });

function intParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new BadRequest(`${name}: an integer from ${min} to ${max}`);
  return n;
}
