import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { findCycles } from "../../../../../src/domain/spec/registry-v2/checks.js";
import { formatProblem, loadRegistryV2, registryFileKind, type FileProblem } from "../../../../../src/domain/spec/registry-v2/index.js";

type Doc = { schemaVersion: string; schemas: Record<string, any>[]; servers: Record<string, any>[]; tools: Record<string, any>[]; agents: Record<string, any>[] };
const FIXTURE = new URL("../../../../fixtures/registry-v2/fleet-v2.json", import.meta.url);
const fleet = (): Doc => JSON.parse(readFileSync(FIXTURE, "utf8")) as Doc;
const tool = (d: Doc, name: string) => d.tools.find((t) => t.name === name)!;
const agent = (d: Doc, name: string) => d.agents.find((a) => a.name === name)!;
const sbom = (a: Record<string, any>): Record<string, unknown>[] => a.capabilities.extensions[0].params.depends;

function problems(d: Doc, kind: "v2" | "v1" = "v2"): { errors: FileProblem[]; warnings: FileProblem[] } {
  const r = loadRegistryV2(d as unknown as Record<string, unknown>, kind);
  return { errors: r.ok ? [] : r.errors, warnings: r.warnings };
}
const codes = (ps: FileProblem[]) => ps.map((p) => `${p.code} ${p.path}`);
const DANGLING = ["servers[2].provides[1]", "servers[5].provides[2]", "servers[7].provides[2]", "servers[8].provides[2]", "servers[9].provides[2]"];

describe("registry file kinds", () => {
  it("tells the three kinds apart by schemaVersion", () => {
    expect(registryFileKind({ agents: [] })).toBe("agents");
    expect(registryFileKind({ schemaVersion: "2.0" })).toBe("v2");
    expect(registryFileKind({ schemaVersion: "1.0", tools: [] })).toBe("v1");
    expect(registryFileKind({ schemaVersion: "3.0" })).toEqual({ error: expect.stringContaining('"3.0" is not supported') });
  });
});

describe("the example-shaped fixture", () => {
  it("loads with exactly the five dangling provides warnings", () => {
    const r = loadRegistryV2(fleet() as unknown as Record<string, unknown>, "v2");
    expect(r.ok).toBe(true);
    expect(codes(r.warnings)).toEqual(DANGLING.map((p) => `dangling_provides ${p}`));
    // Each names the registry entry it concerns, for `graph` to report it with that entry.
    expect(r.warnings.map((w) => w.entry)).toEqual(["member-service", "graph-store", "seat-service", "billing-service", "ticket-service"]);
    if (!r.ok) return;
    expect(r.schemas).toHaveLength(12);
    // A schema is put after the schemas it refers to.
    const order = r.schemas.map((s) => s.name);
    expect(order.indexOf("TripFilters")).toBeLessThan(order.indexOf("TripQuery"));
    expect(order.indexOf("TripOffer")).toBeLessThan(order.indexOf("TripOffers"));
    const kinds = r.entries.map((e) => e.spec.kind);
    expect(kinds.filter((k) => k === "mcp_server")).toHaveLength(10);
    expect(kinds.filter((k) => k === "tool")).toHaveLength(5);
    expect(kinds.filter((k) => k === "agent")).toHaveLength(5);
    expect(r.entries.flatMap((e) => (e.spec.kind === "mcp_server" ? e.spec.capabilities : []))).toHaveLength(22);
  });

  it("maps servers, compositions and agents as documented", () => {
    const r = loadRegistryV2(fleet() as unknown as Record<string, unknown>, "v2");
    if (!r.ok) throw new Error(r.errors.map(formatProblem).join("\n"));
    const spec = (t: string) => r.entries.find((e) => e.spec.agent_type === t)!.spec;
    const web = spec("web-reader");
    expect(web).toMatchObject({ version: "1.2.3", kind: "mcp_server", nats_subject: "mcp.tools.web-reader", consumer_group: "web-reader", owner_team: "static" });
    // Each passthrough tool under its own name, the alias too, with its source kept.
    expect(web.capabilities.map((c) => c.name)).toEqual(["read_url", "open_page"]);
    expect(web.capabilities[1]).toMatchObject({ input_schema: { type: "object" }, output_schema: {}, mcp_extra: { version: "1.0.0", source: { server: "web-reader", tool: "read_url" } } });
    expect(spec("notes-service").owner_team).toBe("notes-team");
    const saga = spec("book_trip");
    expect(saga).toMatchObject({ kind: "tool", nats_subject: "mcp.tools.book_trip" });
    expect(saga.capabilities[0]).toMatchObject({ name: "book_trip", input_schema: { $ref: "#BookingRequest:1.0.0" }, mcp_extra: { spec: tool(fleet(), "book_trip")["spec"] } });
    expect(saga.depends).toHaveLength(6);
    const coordinator = spec("coordinator-agent");
    expect(coordinator).toMatchObject({ kind: "agent", nats_subject: "agent.tasks.coordinator-agent", url: "http://coordinator-agent.internal:9102" });
    expect(coordinator.depends).toContainEqual({ type: "agent", name: "study-agent", version: "2.1.0", capability: "study_subject" });
    expect(spec("study-agent").owner_team).toBe("study-lab");
  });
});

describe("subjects under a subject policy", () => {
  it("every entry takes the policy's subject (a .> policy: its base)", () => {
    const r = loadRegistryV2(fleet() as unknown as Record<string, unknown>, "v2", { subjectPolicy: "agent.tasks.{agent_type}.>" });
    if (!r.ok) throw new Error(r.errors.map(formatProblem).join("\n"));
    const subject = (t: string) => r.entries.find((e) => e.spec.agent_type === t)!.spec.nats_subject;
    expect([subject("web-reader"), subject("book_trip"), subject("desk-agent")]).toEqual(["agent.tasks.web-reader", "agent.tasks.book_trip", "agent.tasks.desk-agent"]);
  });
});

describe("startup errors", () => {
  it.each<[string, (d: Doc) => void, string[]]>([
    ["unresolved_ref", (d) => (tool(d, "add_note")["inputSchema"] = { $ref: "#NoSuch:1.0.0" }), ["unresolved_ref tools[1].inputSchema"]],
    ["unresolved_ref inside a schema", (d) => (d.schemas[0]!["schema"].properties.filters = { $ref: "#TripFilters:9.0.0" }), ["unresolved_ref schemas[0].schema.properties.filters"]],
    ["missing_server", (d) => (tool(d, "current_time")["source"].server = "sundial"), ["missing_server tools[8].source.server"]],
    ["missing_server version", (d) => (tool(d, "current_time")["source"].serverVersion = "2.0.0"), ["missing_server tools[8].source.serverVersion"]],
    ["missing tool dependency", (d) => (tool(d, "read_and_file")["depends"][1].version = "2.0.0"), ["missing tools[22].depends[1]"]],
    ["missing agent dependency", (d) => (sbom(agent(d, "desk-agent"))[1]!["name"] = "nobody"), ["missing agents[4].sbom.depends[1]"]],
    ["duplicate (name, version)", (d) => d.schemas.push({ ...d.schemas[4]! }), ["duplicate schemas[12]"]],
    ["duplicate entry name", (d) => d.agents.push({ ...agent(d, "booking-agent"), name: "book_trip" }), ["duplicate agents[5]"]],
  ])("%s", (_, breakIt, expected) => {
    const d = fleet();
    breakIt(d);
    const { errors, warnings } = problems(d);
    expect(codes(errors)).toEqual(expected);
    // Warnings stay warnings: the broken rule is the only error.
    expect(warnings.every((w) => w.severity === "warning" && w.code !== expected[0]!.split(" ")[0])).toBe(true);
  });

  it("a dependency cycle is an error naming the cycle", () => {
    const d = fleet();
    sbom(agent(d, "digest-agent")).push({ type: "agent", name: "coordinator-agent", version: "1.0.0" });
    const { errors } = problems(d);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "cycle", severity: "error" });
    expect(errors[0]!.message).toContain("agent:coordinator-agent@1.0.0");
    expect(errors[0]!.message).toContain("agent:digest-agent@2.0.0");
  });

  it("a schema ref cycle is an error", () => {
    const d = fleet();
    d.schemas[1]!["schema"].properties.back = { $ref: "#TripQuery:1.0.0" };
    expect(codes(problems(d).errors)).toEqual(["cycle schemas[0].schema"]);
  });

  it("lists every problem at once, each with its path", () => {
    const d = fleet();
    tool(d, "add_note")["inputSchema"] = { $ref: "#NoSuch:1.0.0" };
    tool(d, "current_time")["source"].server = "sundial";
    tool(d, "wide_search")["depends"][0].name = "find_nothing";
    d.servers.push({ ...d.servers[6]! });
    tool(d, "chore_and_alert")["depends"].push({ type: "tool", name: "book_trip", version: "1.0.0" });
    tool(d, "book_trip")["depends"].push({ type: "tool", name: "chore_and_alert", version: "1.0.0" });
    d.agents[0]!["version"] = "two";
    const { errors } = problems(d);
    expect(codes(errors).sort()).toEqual(
      // study-agent, left out for its version, is then missing for the coordinator that names it.
      ["invalid_entry agents[0].version", "missing agents[2].sbom.depends[0]", "duplicate servers[10]", "unresolved_ref tools[1].inputSchema", "missing_server tools[8].source.server", "missing tools[23].depends[0]", "cycle tools[24].depends", "missing tools[25].depends[0]"].sort(),
    );
  });
});

describe("startup warnings", () => {
  it("an unused schema and a deprecated server in use", () => {
    const d = fleet();
    d.schemas.push({ name: "Spare", version: "1.0.0", schema: { type: "object" } });
    d.servers[6]!["deprecated"] = true;
    d.servers[6]!["deprecationMessage"] = "use clock-server 2";
    const { errors, warnings } = problems(d);
    expect(errors).toEqual([]);
    expect(codes(warnings)).toEqual(expect.arrayContaining(["unused_schema schemas[12]", "deprecated tools[8].source.server"]));
    expect(warnings.find((w) => w.code === "deprecated")!.message).toContain("use clock-server 2");
  });

  it("a deprecated tool named by a dependency", () => {
    const d = fleet();
    tool(d, "send_alert")["deprecated"] = "alerts move to the chat bridge";
    const { warnings } = problems(d);
    expect(codes(warnings.filter((w) => w.code === "deprecated"))).toEqual(["deprecated tools[26].depends[1]", "deprecated agents[2].sbom.depends[3]"]);
  });

  it("a v1 file: accepted with a warning, source.target not checked, one mcp_server per target", () => {
    const v1 = { schemaVersion: "1.0", tools: [{ name: "echo", source: { target: "backend-a", tool: "echo" } }, { name: "ping", source: { target: "backend-a", tool: "ping" } }] };
    const r = loadRegistryV2(v1, "v1");
    expect(codes(r.warnings)).toEqual(["v1_format schemaVersion"]);
    if (!r.ok) throw new Error(r.errors.map(formatProblem).join("\n"));
    expect(r.entries).toHaveLength(1);
    expect(r.entries[0]!.spec).toMatchObject({ agent_type: "backend-a", version: "0.0.0", kind: "mcp_server" });
    expect(r.entries[0]!.spec.capabilities.map((c) => c.name)).toEqual(["echo", "ping"]);
  });
});

describe("structure", () => {
  it("refuses a tool with both a source and a spec, and a section that is not a list", () => {
    const d = fleet() as unknown as Record<string, unknown>;
    (d["tools"] as Record<string, unknown>[])[0]!["spec"] = { pipeline: {} };
    d["schemas"] = "none";
    const r = loadRegistryV2(d, "v2");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(codes(r.errors)).toEqual(expect.arrayContaining(["invalid_entry schemas", "invalid_entry tools[0]"]));
  });

  it("bounds sections and dependency lists", () => {
    const d = fleet();
    tool(d, "book_trip")["depends"] = Array.from({ length: 257 }, () => ({ type: "tool", name: "seat_hold", version: "1.0.0" }));
    d.agents = Array.from({ length: 2001 }, () => ({}));
    // (study_and_digest's agents, all refused with the section, are then missing.)
    expect(codes(problems(d).errors.filter((e) => e.code === "invalid_entry"))).toEqual(["invalid_entry tools[24].depends", "invalid_entry agents"]);
  });

  it("findCycles reports a self-loop and each cycle once", () => {
    expect(findCycles(new Map([["a", ["a"]]]))).toEqual([["a", "a"]]);
    expect(findCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c", "a"]]);
    expect(findCycles(new Map([["a", ["b", "c"]], ["b", ["d"]], ["c", ["d"]]]))).toEqual([]);
  });
});

describe("the example of docs/registry-file.md", () => {
  it("loads with the one warning the page names", () => {
    const page = readFileSync(new URL("../../../../../docs/registry-file.md", import.meta.url), "utf8");
    const block = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('"schemaVersion": "2.0"'))!;
    const r = loadRegistryV2(JSON.parse(block) as Record<string, unknown>, "v2");
    expect(r.ok).toBe(true);
    expect(r.warnings.map(formatProblem)).toEqual(['servers[0].provides[1]: dangling_provides: server web-reader provides "read_feed", but no tool of the file has it as source']);
  });
});
