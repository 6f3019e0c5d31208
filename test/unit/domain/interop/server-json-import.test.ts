/**
 * Registering an MCP server by its server.json (domain/interop/mcp/server-json.ts, v1.2): the
 * fixture is a valid server.json under the MCP Registry's own schema, its fields fill the spec,
 * its tools come from inside it or beside it (never both, never neither), what it carries that
 * the registry does not keep is named in a warning, and every refusal points at the path the
 * sender wrote.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { asCardError, specOfRegisterBody, specSourceOf } from "../../../../src/domain/interop/register-body.js";
import { EMBEDDED_TOOLS_PATH, PUBLISHER_META_KEY } from "../../../../src/domain/interop/mcp/server-json.js";
import { invalidSpec, RegistryError } from "../../../../src/domain/errors.js";
import { parseSpec } from "../../../../src/domain/spec/validation.js";
import { presentedSignatures } from "../../../../src/domain/trust/presented-signatures.js";
import { mcpProblems, mcpRegistrySchemas } from "../../../harness/mcp-registry-schemas.js";

const weather = (): Record<string, any> => JSON.parse(readFileSync(new URL("../../../fixtures/cli/weather.server.json", import.meta.url), "utf8"));
const tool = (name: string) => ({ name, inputSchema: { type: "object" } });
const bare = (extra: Record<string, unknown> = {}) => ({ name: "io.example.acme/weather", description: "d", version: "1.0.0", ...extra });

const refusal = (f: () => unknown): string => {
  try {
    f();
    return "accepted";
  } catch (e) {
    return e instanceof RegistryError ? `${e.code} ${e.issues?.map((i) => i.path).join(",") ?? ""}`.trim() : String(e);
  }
};

describe("a server.json register body", () => {
  it("the fixture is a valid server.json under the MCP Registry's server.schema.json", () => {
    expect(mcpProblems(mcpRegistrySchemas.serverJson, weather())).toBe("");
  });

  it("fills description, version, display_name and url from the document and takes the tools inside it", () => {
    const r = specOfRegisterBody("weather", { mcp_server: weather(), owner_team: "acme" });
    expect(r.source).toBe("mcp_server");
    const spec = parseSpec(r.raw);
    expect(spec).toMatchObject({
      agent_type: "weather",
      kind: "mcp_server",
      version: "1.4.0",
      description: "Forecasts and severe weather alerts for any place on Earth",
      display_name: "Weather",
      url: "https://weather.example.com/mcp",
      owner_team: "acme",
      nats_subject: "mcp.tools.weather",
    });
    expect(spec.capabilities.map((c) => c.name)).toEqual(["weather.forecast", "weather.alerts"]);
    expect(spec.capabilities[0]!.annotations).toEqual({ readOnlyHint: true, openWorldHint: true });
    expect(r.warnings).toEqual(["mcp_server.repository, mcp_server.packages: not kept (the registry stores the spec built from the server.json)"]);
  });

  it("takes the tools beside it as mcp_toolspec, and an sse remote when there is no streamable-http one", () => {
    const r = specOfRegisterBody("weather", { mcp_server: bare({ remotes: [{ type: "sse", url: "https://w.example.com/sse" }] }), mcp_toolspec: { tools: [tool("now")] } });
    expect(parseSpec(r.raw)).toMatchObject({ url: "https://w.example.com/sse", capabilities: [{ name: "now" }] });
    expect(r.warnings).toEqual([]);
    expect(specSourceOf({ mcp_server: {}, mcp_toolspec: {} })).toBe("mcp_server");
  });

  it("warns of a short version at the server.json's own path", () => {
    const r = specOfRegisterBody("weather", { mcp_server: bare({ version: "3.1" }), mcp_toolspec: { tools: [tool("now")] } });
    expect(r.warnings).toEqual(['mcp_server.version: "3.1" is not semver X.Y.Z; registered as "3.1.0"']);
  });

  it("warns when the server's name is not the agent type it registers as", () => {
    const r = specOfRegisterBody("forecaster", { mcp_server: bare(), mcp_toolspec: { tools: [tool("now")] } });
    expect(r.warnings).toEqual(['mcp_server.name: "io.example.acme/weather" is registered as agent_type "forecaster" (the register subject\'s)']);
  });

  it("refuses tools in both places or in neither, and the document's own fields beside it", () => {
    const inside = bare({ _meta: { [PUBLISHER_META_KEY]: { tools: [tool("a")] } } });
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: inside, mcp_toolspec: { tools: [tool("b")] } }))).toBe("invalid_request mcp_toolspec");
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: bare() }))).toBe("invalid_card mcp_toolspec");
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: inside, description: "x", url: "https://x" }))).toBe("invalid_request description,url");
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: inside, spec: {} }))).toBe("invalid_request mcp_server");
  });

  it("refuses a document that is not a server.json, naming each field", () => {
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: "server.json" }))).toBe("invalid_card mcp_server");
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: { name: "weather", version: 1, title: 2, remotes: {}, _meta: [] } }))).toBe(
      "invalid_card mcp_server.name,mcp_server.description,mcp_server.version,mcp_server.title,mcp_server.remotes,mcp_server._meta",
    );
    const deep = bare({ _meta: { [PUBLISHER_META_KEY]: { tools: [tool("a")] } }, packages: [JSON.parse(`${"[".repeat(100)}${"]".repeat(100)}`)] });
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: deep }))).toBe("invalid_card mcp_server");
  });

  it("puts a tool's problems where the tool was written: inside the server.json or in mcp_toolspec", () => {
    const badTool = { name: "bad name!", inputSchema: { type: "string" } };
    const inside = bare({ _meta: { [PUBLISHER_META_KEY]: { tools: [tool("ok"), badTool] } } });
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: inside }))).toBe(`invalid_card ${EMBEDDED_TOOLS_PATH}.1.name,${EMBEDDED_TOOLS_PATH}.1.inputSchema.type`);
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: bare(), mcp_toolspec: { tools: [badTool] } }))).toBe("invalid_card mcp_toolspec.tools.0.name,mcp_toolspec.tools.0.inputSchema.type");
    expect(refusal(() => specOfRegisterBody("weather", { mcp_server: bare({ _meta: { [PUBLISHER_META_KEY]: { tools: [] } } }) }))).toBe(`invalid_card ${EMBEDDED_TOOLS_PATH}`);
  });

  it("puts the spec rules' refusals at the server.json's fields", () => {
    const body = { mcp_server: bare({ _meta: { [PUBLISHER_META_KEY]: { tools: [tool("a"), tool("b")] } } }) };
    const e = asCardError(invalidSpec("spec is invalid", [{ path: "version", message: "not semver" }, { path: "capabilities.1.input_schema", message: "bad" }, { path: "owner_team", message: "m" }]), "mcp_server", body, {}) as RegistryError;
    expect(e.code).toBe("invalid_card");
    expect(e.issues?.map((i) => i.path)).toEqual(["mcp_server.version", `${EMBEDDED_TOOLS_PATH}.1.inputSchema`, "owner_team"]);
  });

  it("a signature beside it covers the agent type, the server.json, its tools and the fields beside it", () => {
    const body = { mcp_server: bare(), mcp_toolspec: { tools: [tool("a")] }, owner_team: "acme", signature: { protected: "eyJhbGciOiJFZERTQSJ9", signature: "c2ln" } };
    const doc = presentedSignatures(body)!;
    expect(doc.source).toBe("mcp_server");
    expect(JSON.parse(doc.canonical("weather"))).toEqual({ agent_type: "weather", mcp_server: body.mcp_server, mcp_toolspec: body.mcp_toolspec, owner_team: "acme" });
  });
});
