/**
 * The tool definitions as tools/list shows them, and their calls without a registry: the
 * names of PROTOCOL.md section 13, object schemas that compile, output schemas that admit both
 * the answer and the error body, and arguments refused as the registry's invalid_request with
 * paths before anything is asked. Also the MCP server's settings.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/mcp/tool-definition.js";
import { callTool, listedTool } from "../../../src/mcp/tool-definition.js";
import { registryTools } from "../../../src/mcp/tools.js";
import { loadMcpConfig } from "../../../src/config/mcp.js";
import { ConfigError } from "../../../src/config/load.js";
import { toolErrorBody } from "../../../src/mcp/tool-error.js";
import { NotFoundError, RegistryTimeoutError } from "../../../src/client/errors.js";

const ajv = new Ajv({ strict: false, allErrors: true });

// Any use of the registry in these tests is a bug: argument checks come first.
const noRegistry = new Proxy({}, { get: () => () => Promise.reject(new Error("the registry was asked")) });
const ctx = { link: noRegistry, delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 2000 } as unknown as ToolContext;

describe("tool definitions", () => {
  it("lists tasks_delegate only when delegation is enabled", () => {
    expect(registryTools({ delegate: false }).map((t) => t.name)).toEqual([
      "agents_discover",
      "capabilities_list",
      "capability_lookup",
      "agent_get",
      "agent_card",
      "route",
      "search",
      "registry_health",
    ]);
    expect(registryTools({ delegate: true }).map((t) => t.name).at(-1)).toBe("tasks_delegate");
  });

  it.each(registryTools({ delegate: true }).map((t) => [t.name, t] as const))("%s: object schemas that compile, and an output schema admitting the error body", (_n, tool) => {
    const listed = listedTool(tool);
    expect(listed.inputSchema.type).toBe("object");
    expect(listed.outputSchema?.type).toBe("object");
    expect(listed.inputSchema).not.toHaveProperty("$schema");
    ajv.compile(listed.inputSchema);
    const output = ajv.compile(listed.outputSchema!);
    expect(output({ error: { code: "not_found", message: "x" } })).toBe(true);
    expect(output({ error: { code: "invalid_payload", message: "x", issues: [{ path: "payload.a", message: "m" }] } })).toBe(true);
    expect(output({ error: { code: "no_such_code", message: "x" } })).toBe(false);
    expect(listed.annotations?.title).toBe(tool.title);
  });

  it("refuses bad arguments with the paths, without asking the registry", async () => {
    const byName = new Map(registryTools({ delegate: true }).map((t) => [t.name, t]));
    const r = await callTool(byName.get("agents_discover")!, { limit: 0, colour: "red" }, ctx);
    expect(r.isError).toBe(true);
    const body = r.structuredContent as { error: { code: string; message: string; issues: Array<{ path: string }> } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.issues.map((i) => i.path).sort()).toEqual(["", "limit"]);
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(body);

    const delegate = await callTool(byName.get("tasks_delegate")!, { capability: "x", payload: {}, timeout_ms: 5000 }, ctx);
    expect(delegate.structuredContent).toMatchObject({ error: { code: "invalid_request", issues: [{ path: "timeout_ms", message: "at most 2000" }] } });
  });

  it("turns the registry's failures into its error body", () => {
    expect(toolErrorBody(new NotFoundError("agent type x is not registered"))).toEqual({ error: { code: "not_found", message: "agent type x is not registered" } });
    expect(toolErrorBody(new RegistryTimeoutError("registry.get", 5000)).error.code).toBe("unavailable");
    expect(toolErrorBody(new Error("boom"))).toEqual({ error: { code: "internal", message: "boom" } });
  });
});

describe("MCP settings", () => {
  it("takes flags over the environment, lists split on commas, and defaults", () => {
    const c = loadMcpConfig(
      { "http-port": "3001", "allowed-origin": ["https://a.example"] },
      { REGISTRY_MCP_HTTP_PORT: "9", REGISTRY_MCP_ALLOWED_HOSTS: "a.example, b.example", REGISTRY_MCP_DELEGATE: "yes" },
    );
    expect(c).toMatchObject({ httpPort: 3001, httpHost: "127.0.0.1", allowedHosts: ["a.example", "b.example"], allowedOrigins: ["https://a.example"], delegate: true, delegateTimeoutMs: 30000 });
    expect(loadMcpConfig({}, {}).httpPort).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("names the flag and the variable of a bad value", () => {
    expect(() => loadMcpConfig({ "http-port": "http" }, {})).toThrow(ConfigError);
    expect(() => loadMcpConfig({ "http-port": "http" }, {})).toThrow(/REGISTRY_MCP_HTTP_PORT \/ --http-port: /);
    expect(() => loadMcpConfig({}, { REGISTRY_MCP_DELEGATE_TIMEOUT_MS: "500000" })).toThrow(/--delegate-timeout: .*must not exceed/);
  });

  it("keeps HTTP stateless unless sessions are asked for, and bounds them", () => {
    expect(loadMcpConfig({}, {})).toMatchObject({ httpSessions: false, maxSessions: 1000, sessionIdleMs: 1_800_000 });
    const on = loadMcpConfig({ "http-sessions": true, "max-sessions": "50" }, { REGISTRY_MCP_SESSION_IDLE_MS: "60000" });
    expect(on).toMatchObject({ httpSessions: true, maxSessions: 50, sessionIdleMs: 60000 });
    expect(loadMcpConfig({}, { REGISTRY_MCP_HTTP_SESSIONS: "true" }).httpSessions).toBe(true);
    expect(() => loadMcpConfig({ "max-sessions": "0" }, {})).toThrow(/REGISTRY_MCP_MAX_SESSIONS \/ --max-sessions: /);
    expect(() => loadMcpConfig({}, { REGISTRY_MCP_SESSION_IDLE_MS: "0" })).toThrow(/REGISTRY_MCP_SESSION_IDLE_MS \/ --session-idle-timeout: /);
  });
});
