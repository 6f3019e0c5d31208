/**
 * A lower bound on the bytes of the fleet's SBOM (PROTOCOL.md section 11.2, `sbom` with no
 * agent_type), in either format, read from the specs alone: no graph, no document, no JSON.
 * The `sbom` op compares it with what a reply can carry before it builds anything, so a
 * fleet whose document cannot fit is refused at the cost of a sum, not of the document
 * (issue 35, item 9). A floor, never an estimate: when it says "too large", the document
 * built would have been refused too, so admission changes when a refusal comes, not which.
 *
 * Why it is one: the fleet's document has an entry for every agent type the asker may see
 * (its graph holds every visible agent's node, or it is refused as truncated), and that
 * entry writes, in both formats, the agent's node id, name, version, description (or name),
 * owner team and NATS subject as JSON strings. A JSON string is at least as long as its
 * value, and a UTF-8 byte count at least a UTF-16 length, so the sum of these lengths
 * is at most the document's bytes; keys, punctuation, models and dependencies only add.
 */
import { agentNodeId } from "../graph/resolution.js";
import { visibleTo, type AgentState } from "../model/model.js";

/** The strings of an agent's entry that every format of the document writes in full. */
export function entryFloor(agent: AgentState): number {
  const { spec } = agent;
  return agentNodeId(agent).length + agent.agent_type.length + spec.version.length + (spec.description || agent.agent_type).length + spec.owner_team.length + spec.nats_subject.length;
}

/**
 * The floor of the fleet's document as `tenant` (null: shared agents only) sees it. Counting
 * stops once it passes `limit`: the answer is then some number above `limit`, which is all a
 * caller deciding on admission needs, and a very large fleet costs no more than a fitting one.
 */
export function fleetDocumentFloor(fleet: { all(): Iterable<AgentState> }, tenant: string | null, limit: number): number {
  let bytes = 0;
  for (const agent of fleet.all()) {
    if (!visibleTo(agent, tenant)) continue;
    bytes += entryFloor(agent);
    if (bytes > limit) break;
  }
  return bytes;
}
