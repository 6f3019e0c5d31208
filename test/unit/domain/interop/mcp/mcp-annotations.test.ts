/**
 * Tool annotations (PROTOCOL.md section 10.2, v1.2): stored and exported exactly as given, and
 * shown apart, as `effective_annotations` in the registry's own replies, with MCP's defaults
 * that apply (`destructiveHint` and `idempotentHint` only for a tool that is not read-only).
 * GitHub's get_me (test/fixtures/mcp/README.md) is read-only and says nothing of destruction:
 * an MCP client must not be told it is destructive.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { effectiveAnnotations, exportToolspec, importToolspec, type McpToolspec } from "../../../../../src/domain/interop/mcp/index.js";
import { agentView, lookupProvider } from "../../../../../src/domain/query/agent-view.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";
import { makeAgent } from "../../../fixtures.js";

const checker = new SchemaChecker();
const github = JSON.parse(readFileSync(new URL("../../../../fixtures/mcp/github-server.json", import.meta.url), "utf8")) as McpToolspec;
const register = (toolspec: McpToolspec) => validateSpec(importToolspec({ mcp_toolspec: toolspec, description: "GitHub", version: "0.30.0" }, { agentType: "github" }).spec, checker);

describe("effective annotations", () => {
  it("are the given ones plus MCP's defaults for the hints left out", () => {
    expect(effectiveAnnotations(undefined)).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(effectiveAnnotations({ title: "T", destructiveHint: false })).toEqual({ title: "T", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
    expect(effectiveAnnotations({ openWorldHint: false, idempotentHint: true })).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
  });

  it("give a read-only tool no default destructiveHint or idempotentHint, which MCP defines only for tools that write", () => {
    expect(effectiveAnnotations({ readOnlyHint: true })).toEqual({ readOnlyHint: true, openWorldHint: true });
    // What a read-only tool does say is shown as it said it.
    expect(effectiveAnnotations({ readOnlyHint: true, idempotentHint: false })).toEqual({ readOnlyHint: true, idempotentHint: false, openWorldHint: true });
  });
});

describe("GitHub's tools through import, views and export", () => {
  it("store and export each tool's annotations exactly as given: get_me is not made destructive", () => {
    const { spec, warnings } = register(github);
    expect(warnings).toEqual([]);
    expect(spec.capabilities.map((c) => c.annotations)).toEqual(github.tools.map((t) => t.annotations));
    const exported = exportToolspec(spec).tools;
    expect(exported.map((t) => t.annotations)).toEqual(github.tools.map((t) => t.annotations));
    const getMe = exported.find((t) => t.name === "get_me")!;
    expect(getMe.annotations).toEqual({ idempotentHint: false, readOnlyHint: true, title: "Get my user profile" });
    expect(getMe).not.toHaveProperty("effective_annotations");
  });

  it("show the defaults that apply as effective_annotations in get's capabilities and lookup's providers", () => {
    const agent = makeAgent(register(github).spec);
    const view = agentView(agent);
    const [createPr, getMe] = view.capabilities;
    expect(createPr!.annotations).toEqual({ title: "Open new pull request" });
    expect(createPr!.effective_annotations).toEqual({ title: "Open new pull request", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(getMe!.effective_annotations).toEqual({ title: "Get my user profile", readOnlyHint: true, idempotentHint: false, openWorldHint: true });
    expect(lookupProvider(agent, agent.spec.capabilities[1]!).effective_annotations).toEqual(getMe!.effective_annotations);
    // The view is a copy: the stored capability is untouched.
    expect(agent.spec.capabilities[1]).not.toHaveProperty("effective_annotations");
  });

  it("take get's capabilities back as a spec without a warning, effective_annotations not stored", () => {
    const view = agentView(makeAgent(register(github).spec));
    const again = validateSpec({ ...view, capabilities: view.capabilities }, checker);
    expect(again.warnings.filter((w) => w.includes("effective_annotations"))).toEqual([]);
    expect(again.spec.capabilities[1]).not.toHaveProperty("effective_annotations");
    expect(again.spec.capabilities[1]!.annotations).toEqual(github.tools[1]!.annotations);
  });
});
