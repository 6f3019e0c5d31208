import { describe, expect, it } from "vitest";
import { discover, discoverStatus, find } from "../../../../src/domain/query/discovery.js";
import type { FindQuery } from "../../../../src/domain/query/discovery.js";
import type { InstanceState } from "../../../../src/domain/model/model.js";
import { cap, indexOf, makeAgent, makeSpec } from "../../fixtures.js";

const spec = makeSpec({ agent_type: "worker", max_concurrent_tasks: 2 });
const inst = (status: InstanceState["status"], active_tasks = 0): Partial<InstanceState> => ({ status, active_tasks });

describe("discoverStatus", () => {
  it.each([
    { name: "one ready instance with room", instances: [inst("ready", 1)], status: "ready" },
    { name: "the only ready instance is full", instances: [inst("ready", 2)], status: "busy" },
    { name: "an instance over its limit counts as full", instances: [inst("ready", 7)], status: "busy" },
    { name: "one of two ready instances has room", instances: [inst("ready", 2), inst("ready", 0)], status: "ready" },
    { name: "every ready instance is full", instances: [inst("ready", 2), inst("ready", 3)], status: "busy" },
    { name: "a draining instance with room does not help", instances: [inst("ready", 2), inst("draining", 0)], status: "busy" },
    { name: "registered only", instances: [inst("registered")], status: "unavailable" },
    { name: "draining only", instances: [inst("draining")], status: "unavailable" },
    { name: "no instance", instances: [], status: "unavailable" },
  ])("$name: $status", ({ instances, status }) => {
    expect(discoverStatus(makeAgent(spec, { instances }))).toBe(status);
  });
});

describe("discover", () => {
  const providers = [{ id: "openai", models: ["gpt-4o"], kind: "llm" as const, capabilities: { streaming: true } }];
  const agents = [
    makeAgent(makeSpec({ agent_type: "zeta", capabilities: [cap("text.summarize"), cap("text.translate")] })),
    makeAgent(makeSpec({ agent_type: "alpha", capabilities: [cap("code.review")], providers }), { status: "registered" }),
    makeAgent(makeSpec({ agent_type: "gone", capabilities: [cap("code.review")] }), { status: "deregistered" }),
    makeAgent(makeSpec({ agent_type: "empty-providers", capabilities: [cap("code.review")], providers: [] })),
  ];

  it("lists every agent that is not deregistered, ordered by id", () => {
    expect(discover(agents)).toEqual([
      { id: "alpha", capabilities: ["code.review"], status: "unavailable", providers: agents[1]!.spec.providers },
      { id: "empty-providers", capabilities: ["code.review"], status: "ready" },
      { id: "zeta", capabilities: ["text.summarize", "text.translate"], status: "ready" },
    ]);
  });

  it("keeps providers only when the spec has some", () => {
    const [alpha, empty] = discover(agents);
    expect(alpha?.providers?.[0]?.id).toBe("openai");
    expect(empty && "providers" in empty).toBe(false);
  });

  it("filters by capability", () => {
    expect(discover(agents, "code.review").map((a) => a.id)).toEqual(["alpha", "empty-providers"]);
    expect(discover(agents, "text.translate").map((a) => a.id)).toEqual(["zeta"]);
    expect(discover(agents, "unknown")).toEqual([]);
  });

  it("filters by kind, with the capability filter too", () => {
    const tools = [...agents, makeAgent(makeSpec({ agent_type: "mcp-files", kind: "mcp_server", capabilities: [cap("code.review"), cap("read_file")] }))];
    expect(discover(tools, undefined, "mcp_server").map((a) => a.id)).toEqual(["mcp-files"]);
    expect(discover(tools, "code.review", "agent").map((a) => a.id)).toEqual(["alpha", "empty-providers"]);
    expect(discover(tools, "text.translate", "mcp_server")).toEqual([]);
    expect(discover(tools, undefined, "tool")).toEqual([]);
  });
});

describe("find", () => {
  const index = indexOf([
    makeAgent(makeSpec({ agent_type: "reviewer-b", capabilities: [cap("code.review", { tags: ["code"] })] })),
    makeAgent(makeSpec({ agent_type: "reviewer-a", capabilities: [cap("code.review"), cap("code.lint", { tags: ["code", "style"] })] })),
    makeAgent(makeSpec({ agent_type: "draining", capabilities: [cap("code.review", { tags: ["code"] })] }), { status: "draining" }),
    makeAgent(makeSpec({ agent_type: "gone", capabilities: [cap("code.review", { tags: ["code"] })] }), { status: "deregistered" }),
    makeAgent(makeSpec({ agent_type: "acme-reviewer", tenant_scope: "acme", capabilities: [cap("code.review", { tags: ["code"] })] })),
  ]);
  const types = (q: FindQuery, tenant: string | null = null) => find(index, q, tenant).map((a) => a.agent_type);

  it.each<{ q: FindQuery; tenant: string | null; expected: string[] }>([
    { q: { skill: "code.review" }, tenant: null, expected: ["draining", "reviewer-a", "reviewer-b"] },
    { q: { skill: "code.review" }, tenant: "acme", expected: ["acme-reviewer", "draining", "reviewer-a", "reviewer-b"] },
    { q: { skill: "code.review" }, tenant: "globex", expected: ["draining", "reviewer-a", "reviewer-b"] },
    { q: { tag: "style" }, tenant: null, expected: ["reviewer-a"] },
    { q: { tag: "code" }, tenant: null, expected: ["draining", "reviewer-a", "reviewer-b"] },
    { q: { name: "reviewer-b" }, tenant: null, expected: ["reviewer-b"] },
    { q: { name: "gone" }, tenant: null, expected: [] },
    { q: { name: "acme-reviewer" }, tenant: null, expected: [] },
    { q: { name: "acme-reviewer" }, tenant: "acme", expected: ["acme-reviewer"] },
    { q: { name: "nobody" }, tenant: null, expected: [] },
    { q: { skill: "nothing.here" }, tenant: null, expected: [] },
  ])("$q as $tenant -> $expected", ({ q, tenant, expected }) => {
    expect(types(q, tenant)).toEqual(expected);
  });

  it("keeps verified agents only when verified_only is asked for (offeredTo)", () => {
    const verified = { ...makeAgent(makeSpec({ agent_type: "signed-reviewer", capabilities: [cap("code.review")] })), trust: { verified: true, kid: "k1", publisher: "Acme", verified_at: 1 } as const };
    const withSigned = indexOf([makeAgent(makeSpec({ agent_type: "plain-reviewer", capabilities: [cap("code.review")] })), verified]);
    expect(find(withSigned, { skill: "code.review", verified_only: true }, null).map((a) => a.agent_type)).toEqual(["signed-reviewer"]);
    expect(find(withSigned, { skill: "code.review" }, null).map((a) => a.agent_type)).toEqual(["plain-reviewer", "signed-reviewer"]);
  });

  it("ignores other keys such as min_revision", () => {
    expect(types({ skill: "code.review", min_revision: 3 } as FindQuery)).toHaveLength(3);
  });

  it.each<FindQuery>([{}, { skill: "a", tag: "b" }, { skill: "a", tag: "b", name: "c" }, { skill: "" }, { tag: 3 }, { name: null }])(
    "refuses %j with invalid_request",
    (q) => {
      expect(() => find(index, q, null)).toThrow(expect.objectContaining({ code: "invalid_request", status: 400 }));
    },
  );
});
