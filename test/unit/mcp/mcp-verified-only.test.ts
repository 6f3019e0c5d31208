/**
 * The MCP tools pass `verified_only` (v1.2, docs/trust.md) on to the registry's query, and send
 * nothing of it when the call does not ask: an agent behind MCP can keep to verified providers.
 */
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/mcp/tool-definition.js";
import { callTool } from "../../../src/mcp/tool-definition.js";
import { registryTools } from "../../../src/mcp/tools.js";

/** A client that answers every query with an empty reply and keeps the requests it was sent. */
function recordingContext(): { ctx: ToolContext; sent: Array<{ op: string; req: unknown }> } {
  const sent: Array<{ op: string; req: unknown }> = [];
  const replies: Record<string, unknown> = {
    discover: { agents: [], next_cursor: null, revision: 1 },
    lookup: { capability: "c", providers: [], next_cursor: null, revision: 1 },
    route: { agent_type: "a", nats_subject: "s", consumer_group: "a", version: "1.0.0", runtime: null, score: 1, candidates: [], revision: 1 },
    search: { results: [], revision: 1 },
  };
  // Not a thenable (no `then`), so awaiting the client gives the client.
  const client = new Proxy({}, { get: (_t, op: string) => (op === "then" ? undefined : async (req: unknown) => (sent.push({ op, req }), replies[op])) });
  const ctx = { link: { client: async () => client }, delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 2000 } as unknown as ToolContext;
  return { ctx, sent };
}

const tools = new Map(registryTools({ delegate: false }).map((t) => [t.name, t]));

describe("verified_only through the MCP tools", () => {
  it.each([
    ["agents_discover", {}, "discover"],
    ["capability_lookup", { capability: "summarize" }, "lookup"],
    ["route", { skill: "summarize" }, "route"],
    ["search", { query: "summarize" }, "search"],
  ] as const)("%s forwards it to %s", async (name, args, op) => {
    const { ctx, sent } = recordingContext();
    const asked = await callTool(tools.get(name)!, { ...args, verified_only: true }, ctx);
    expect(asked.isError, JSON.stringify(asked.structuredContent)).toBeFalsy();
    const plain = await callTool(tools.get(name)!, args, ctx);
    expect(plain.isError).toBeFalsy();
    expect(sent.map((s) => s.op)).toEqual([op, op]);
    expect(sent[0]!.req).toMatchObject({ verified_only: true });
    expect(sent[1]!.req).not.toHaveProperty("verified_only");
  });
});
