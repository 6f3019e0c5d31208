/**
 * registration-body.ts: the register body a document and its flags become (flags complete
 * the file, never contradict it), and how `register` hands that body to the SDK.
 */
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/context.js";
import { instanceFlags, registrationFlags, registrationOf, type RegistrationFlags } from "../../../src/cli/registration-body.js";
import { detectDocument, type RegistrationDocument } from "../../../src/cli/registration-document.js";
import { sdkRegistration } from "../../../src/cli/commands/register.js";

const spec = {
  agent_type: "summarizer",
  version: "1.0.0",
  description: "d",
  owner_team: "t",
  capabilities: [{ name: "text.summarize", description: "d", input_schema: {}, output_schema: {} }],
  nats_subject: "agents.summarizer.tasks",
  consumer_group: "summarizer",
};
const card = { name: "Greeter", description: "d", version: "1.0.0", skills: [{ id: "greet", name: "Greet" }] };
const tools = { tools: [{ name: "read_file", inputSchema: { type: "object" } }] };

const doc = (value: Record<string, unknown>): RegistrationDocument => {
  const d = detectDocument(value);
  if (!d.ok) throw new Error(d.errors.join("; "));
  return d;
};
const build = (value: Record<string, unknown>, flags: RegistrationFlags = {}, fallback?: () => string) => registrationOf(doc(value), flags, fallback);
const usage = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error("no usage error");
};

describe("registrationOf", () => {
  it("an AgentSpec: {spec}, the agent_type its own; --agent-type must agree, or fills in a missing one", () => {
    expect(build(spec)).toEqual({ agentType: "summarizer", body: { spec }, source: "spec", kind: "agent_spec" });
    expect(build(spec, { agentType: "summarizer" }).body).toEqual({ spec });
    expect(usage(() => build(spec, { agentType: "other" }))).toBe('--agent-type other does not match the spec\'s agent_type "summarizer"');
    const { agent_type: _, ...anonymous } = spec;
    expect(build(anonymous, { agentType: "named" }).body).toEqual({ spec: { ...anonymous, agent_type: "named" } });
    // No agent_type anywhere: left to the spec's validation, which names the missing field.
    expect(build(anonymous).agentType).toBeUndefined();
  });

  it("a bare card: --agent-type is required (or validate's default), the card's flags go beside it", () => {
    const flags = { agentType: "greeter", strict: true, natsSubject: "agents.greeter", ownerTeam: "people" };
    expect(build(card, flags)).toEqual({
      agentType: "greeter",
      body: { a2a_card: card, agent_type: "greeter", strict: true, nats_subject: "agents.greeter", owner_team: "people" },
      source: "a2a_card",
      kind: "a2a_card",
    });
    expect(usage(() => build(card))).toBe("--agent-type NAME is required: this A2A Agent Card names no agent_type");
    expect(build(card, {}, () => "from-file").body).toEqual({ a2a_card: card, agent_type: "from-file" });
  });

  it("a bare tools/list result: --description and --spec-version are required, since it has neither", () => {
    const flags = { agentType: "files", description: "Files", specVersion: "1.0.0", ownerTeam: "infra" };
    expect(build(tools, flags).body).toEqual({ mcp_toolspec: tools, agent_type: "files", description: "Files", version: "1.0.0", owner_team: "infra" });
    expect(usage(() => build(tools, { agentType: "files", description: "Files" }))).toMatch(/pass --description TEXT and --spec-version X\.Y\.Z$/);
    // A body file may leave them out: the registry's own check names the missing field.
    expect(build({ mcp_toolspec: tools, agent_type: "files" }).body).toEqual({ mcp_toolspec: tools, agent_type: "files" });
  });

  it("a bare server.json: the agent_type defaults to its name after the /, and only --nats-subject and --owner-team complete it", () => {
    const server = { name: "io.example/weather", version: "1.0.0", description: "d", remotes: [] };
    expect(build(server, { ownerTeam: "acme" })).toEqual({ agentType: "weather", body: { mcp_server: server, agent_type: "weather", owner_team: "acme" }, source: "mcp_server", kind: "mcp_server" });
    expect(build(server, { agentType: "forecast" }).agentType).toBe("forecast");
    // A name whose last part is no agent type asks for the flag.
    expect(usage(() => build({ ...server, name: "io.example/Weather.App" }))).toBe("--agent-type NAME is required: this MCP server.json names no agent_type");
    expect(usage(() => build(server, { description: "x" }))).toBe("--description completes an MCP tool spec, and this file is an MCP server.json");
  });

  it("refuses a flag that does not complete the file's form, saying which form it completes", () => {
    expect(usage(() => build(tools, { agentType: "f", description: "d", specVersion: "1.0.0", strict: true }))).toBe("--strict completes an A2A card, and this file is an MCP tool spec");
    expect(usage(() => build(card, { agentType: "g", description: "d" }))).toBe("--description completes an MCP tool spec, and this file is an A2A card");
    expect(usage(() => build(spec, { ownerTeam: "t" }))).toBe("--owner-team completes an A2A card, an MCP tool spec or an MCP server.json, and this file is an AgentSpec; set owner_team in the spec");
    expect(usage(() => build({ spec }, { natsSubject: "a.b" }))).toMatch(/^--nats-subject completes .*; set nats_subject in the spec$/);
  });

  it("a register body: flags fill what it leaves out and must agree with what it says", () => {
    const body = { agent_type: "greeter", a2a_card: card, owner_team: "people", metadata: { zone: "a" } };
    expect(build(body, { agentType: "greeter", ownerTeam: "people", natsSubject: "agents.greeter", metadata: { rack: "1" } }).body).toEqual({
      ...body,
      nats_subject: "agents.greeter",
      metadata: { zone: "a", rack: "1" },
    });
    expect(usage(() => build(body, { agentType: "other" }))).toBe('--agent-type other does not match the file\'s agent_type "greeter"');
    expect(usage(() => build(body, { ownerTeam: "others" }))).toBe('--owner-team "others" contradicts the file\'s owner_team "people"');
    expect(usage(() => build(body, { metadata: { zone: "b" } }))).toBe('--metadata zone=b contradicts the file\'s metadata.zone "a"');
    expect(usage(() => build({ ...body, strict: false }, { strict: true }))).toBe("--strict true contradicts the file's strict false");
    expect(build({ a2a_card: card }, { agentType: "named" }).body).toEqual({ a2a_card: card, agent_type: "named" });
  });

  it("refuses a registry file: the service loads those", () => {
    expect(usage(() => build({ agents: [] }))).toMatch(/registry file/);
  });
});

describe("flags", () => {
  it("reads the registration flags and register's instance flags", () => {
    expect(registrationFlags({ "agent-type": "a", strict: true, "spec-version": "1.0.0", "owner-team": "t" })).toEqual({
      agentType: "a",
      strict: true,
      description: undefined,
      specVersion: "1.0.0",
      natsSubject: undefined,
      ownerTeam: "t",
    });
    expect(registrationFlags({ strict: false }).strict).toBeUndefined();
    expect(instanceFlags({ "instance-id": "i1", interval: "500", status: "registered", metadata: ["a=b"], replace: true })).toEqual({
      instanceId: "i1",
      heartbeatIntervalMs: 500,
      status: "registered",
      metadata: { a: "b" },
      replace: true,
    });
    expect(() => instanceFlags({ status: "draining" })).toThrow(/--status: expected ready or registered/);
  });
});

describe("sdkRegistration", () => {
  it("hands the SDK the spec itself, or the card or tool spec with its fields, and the instance's fields as options", () => {
    const fromSpec = sdkRegistration(build({ spec, instance_id: "i1", replace: true }, { heartbeatIntervalMs: 500 }));
    expect(fromSpec.what).toEqual(spec);
    expect(fromSpec.options).toEqual({ instanceId: "i1", heartbeatIntervalMs: 500, status: undefined, metadata: undefined, replace: true });
    const fromCard = sdkRegistration(build(card, { agentType: "greeter", strict: true, status: "registered" }));
    expect(fromCard.what).toEqual({ a2a_card: card, agent_type: "greeter", strict: true });
    expect(fromCard.options.status).toBe("registered");
  });
});
