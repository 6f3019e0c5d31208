/**
 * docs/interop.md shows what the registry answers; this holds its examples to the code: the
 * card example's reply warnings and version, the tool spec example's capabilities, the
 * server.json example's mapping, and the
 * exported card of a plain spec are what the import and export modules produce.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { exportCard } from "../../../src/domain/interop/a2a/index.js";
import { specOfRegisterBody } from "../../../src/domain/interop/register-body.js";
import { parseSpec } from "../../../src/domain/spec/validation.js";

const doc = readFileSync(new URL("../../../docs/interop.md", import.meta.url), "utf8");
const json = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, any>);
const [cardBody, cardReply, toolspecBody, serverJsonBody, exported] = json;

it("the card example registers with the warnings and the a2a_version the reply example shows", () => {
  const r = specOfRegisterBody(cardReply!["agent_type"], cardBody!);
  expect(r.a2aVersion).toBe(cardReply!["a2a_version"]);
  expect(r.warnings).toEqual(cardReply!["warnings"]);
  expect(parseSpec(r.raw).version).toBe(cardReply!["version"]);
});

it("the tool spec example becomes one capability per tool, annotations as given", () => {
  const spec = parseSpec(specOfRegisterBody("notes", toolspecBody!).raw);
  expect(spec.kind).toBe("mcp_server");
  expect(spec.capabilities.map((c) => c.name)).toEqual(["list_notes", "write_note"]);
  expect(spec.capabilities[0]!.annotations).toEqual(toolspecBody!["mcp_toolspec"].tools[0].annotations);
  expect(spec.capabilities[1]).not.toHaveProperty("annotations");
  expect(spec.capabilities[1]!._meta).toEqual({ "example.test/audit": "on" });
  expect(spec.capabilities[1]!.mcp_extra).toBeUndefined();
});

it("the server.json example registers as its table says, with one warning for what it does not keep", () => {
  const r = specOfRegisterBody("tides", serverJsonBody!);
  const spec = parseSpec(r.raw);
  expect(spec).toMatchObject({ kind: "mcp_server", description: "Tide tables for the world's harbours", version: "3.0.1", display_name: "Tides", url: "https://tides.example.com/mcp", owner_team: "marine" });
  expect(spec.capabilities.map((c) => c.name)).toEqual(["tides.table"]);
  expect(r.warnings).toEqual(["mcp_server.packages: not kept (the registry stores the spec built from the server.json)"]);
});

it("the exported card example is what a plain spec exports as", () => {
  const spec = parseSpec({
    agent_type: "summarizer", version: "1.2.0", description: "Summarizes documents", owner_team: "t",
    capabilities: [{ name: "text.summarize", description: "Summarize a text", input_schema: {}, output_schema: {} }],
    nats_subject: "agent.tasks.summarizer", consumer_group: "summarizer",
  });
  expect(exportCard(spec, "1.0")).toEqual(exported);
});
