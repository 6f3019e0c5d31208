import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RegistryError } from "../../../../src/domain/errors.js";
import type { AgentState } from "../../../../src/domain/model/model.js";
import { visibleTo } from "../../../../src/domain/model/model.js";
import { route, routingWeight } from "../../../../src/domain/query/routing.js";
import { MAX_WEIGHT } from "../../../../src/protocol/spec.js";
import type { RouteRequest } from "../../../../src/domain/query/routing.js";
import { cap, indexOf, makeAgent, makeSpec } from "../../fixtures.js";

type Case = {
  name: string;
  agents: AgentState[];
  req: RouteRequest;
  tenant?: string | null;
  winner: string;
  score: number;
  candidates?: [string, number][];
};

const agent = (
  agentType: string,
  caps: ReturnType<typeof cap>[],
  extra: { runtime?: string; weight?: number; tenant_scope?: string | null } = {},
  opts: Parameters<typeof makeAgent>[1] = {},
) => makeAgent(makeSpec({ agent_type: agentType, capabilities: caps, ...extra }), opts);

const cases: Case[] = [
  {
    name: "skill match scores 1.0",
    agents: [agent("reviewer", [cap("code.review")]), agent("other", [cap("text.summarize")])],
    req: { skill: "code.review" },
    winner: "reviewer",
    score: 1,
    candidates: [["reviewer", 1]],
  },
  {
    name: "a tie goes to the agent registered first, whatever its name",
    agents: [
      agent("aaa", [cap("code.review")], {}, { registered_at: 2_000 }),
      agent("zzz", [cap("code.review")], {}, { registered_at: 1_000 }),
    ],
    req: { skill: "code.review" },
    winner: "zzz",
    score: 1,
    candidates: [["zzz", 1], ["aaa", 1]],
  },
  {
    name: "a tie at the same registration time goes to the smaller agent_type",
    agents: [agent("bbb", [cap("x")]), agent("aaa", [cap("x")])],
    req: { skill: "x" },
    winner: "aaa",
    score: 1,
    candidates: [["aaa", 1], ["bbb", 1]],
  },
  {
    name: "a repeated requested tag counts once, and a tag on two capabilities counts once",
    agents: [agent("tagged", [cap("a", { tags: ["code"] }), cap("b", { tags: ["code"] })])],
    req: { tags: ["code", "code"] },
    winner: "tagged",
    score: 0.5,
  },
  {
    name: "distinct tags count over the union of the capabilities' tags",
    agents: [
      agent("two-tags", [cap("a", { tags: ["code"] }), cap("b", { tags: ["security"] })]),
      agent("one-tag", [cap("c", { tags: ["code"] })], {}, { registered_at: 1 }),
    ],
    req: { tags: ["code", "security", "missing"] },
    winner: "two-tags",
    score: 1,
    candidates: [["two-tags", 1], ["one-tag", 0.5]],
  },
  {
    name: "a runtime-only request scores 0.1 and skips other runtimes",
    agents: [
      agent("bridge", [cap("a")], { runtime: "copilot-bridge" }),
      agent("container", [cap("b")], { runtime: "acp-container" }),
      agent("none", [cap("c")]),
    ],
    req: { preferred_runtime: "acp-container" },
    winner: "container",
    score: 0.1,
    candidates: [["container", 0.1]],
  },
  {
    name: "skill plus runtime is exactly 1.1 (no float noise)",
    agents: [agent("a", [cap("x")], { runtime: "acp-container" }), agent("b", [cap("x")])],
    req: { skill: "x", preferred_runtime: "acp-container" },
    winner: "a",
    score: 1.1,
    candidates: [["a", 1.1], ["b", 1]],
  },
  {
    name: "all criteria add up: 1.0 + 2 x 0.5 + 0.1",
    agents: [agent("full", [cap("x", { tags: ["t1", "t2"] })], { runtime: "r" })],
    req: { skill: "x", tags: ["t1", "t2"], preferred_runtime: "r" },
    winner: "full",
    score: 2.1,
  },
  {
    name: "weight multiplies the sum: 3 x 0.5 beats 1.0",
    agents: [
      agent("skilled", [cap("x")], {}, { registered_at: 1 }),
      agent("heavy", [cap("y", { tags: ["t"] })], { weight: 3 }),
    ],
    req: { skill: "x", tags: ["t"] },
    winner: "heavy",
    score: 1.5,
    candidates: [["heavy", 1.5], ["skilled", 1]],
  },
  {
    name: "weight below 1 can lose, and the product is rounded",
    agents: [
      agent("light", [cap("x")], { runtime: "r", weight: 0.3 }),
      agent("tagged", [cap("y", { tags: ["t"] })]),
    ],
    req: { skill: "x", tags: ["t"], preferred_runtime: "r" },
    winner: "tagged",
    score: 0.5,
    candidates: [["tagged", 0.5], ["light", 0.33]],
  },
  {
    name: "equal weighted scores still tie-break on registration",
    agents: [
      agent("late", [cap("x")], {}, { registered_at: 5 }),
      agent("early", [cap("y", { tags: ["t"] })], { weight: 2 }, { registered_at: 4 }),
    ],
    req: { skill: "x", tags: ["t"] },
    winner: "early",
    score: 1,
  },
  {
    name: "registered, draining and deregistered agents are ignored",
    agents: [
      agent("registered", [cap("x")], {}, { status: "registered" }),
      agent("draining", [cap("x")], {}, { status: "draining" }),
      agent("gone", [cap("x")], {}, { status: "deregistered" }),
      agent("ready", [cap("y", { tags: ["t"] })]),
    ],
    req: { skill: "x", tags: ["t"] },
    winner: "ready",
    score: 0.5,
    candidates: [["ready", 0.5]],
  },
  {
    name: "a tenant sees its own agents and shared ones",
    agents: [
      agent("shared", [cap("x")], {}, { registered_at: 1 }),
      agent("acme-only", [cap("x")], { tenant_scope: "acme", weight: 2 }),
    ],
    req: { skill: "x" },
    tenant: "acme",
    winner: "acme-only",
    score: 2,
    candidates: [["acme-only", 2], ["shared", 1]],
  },
  {
    name: "another tenant does not see a scoped agent",
    agents: [agent("shared", [cap("x")]), agent("acme-only", [cap("x")], { tenant_scope: "acme", weight: 2 })],
    req: { skill: "x" },
    tenant: "globex",
    winner: "shared",
    score: 1,
    candidates: [["shared", 1]],
  },
  {
    name: "the shared subject sees shared agents only",
    agents: [agent("shared", [cap("x")]), agent("acme-only", [cap("x")], { tenant_scope: "acme", weight: 2 })],
    req: { skill: "x" },
    tenant: null,
    winner: "shared",
    score: 1,
  },
];

describe("route", () => {
  it.each(cases)("$name", ({ agents, req, tenant, winner, score, candidates }) => {
    const result = route(indexOf(agents), req, tenant ?? null);
    expect(result.agent_type).toBe(winner);
    expect(result.score).toBe(score);
    if (candidates) expect(result.candidates.map((c) => [c.agent_type, c.score])).toEqual(candidates);
  });

  it("returns where to send the task", () => {
    const spec = makeSpec({ agent_type: "bug-fixer", version: "2.1.3", runtime: "acp-container", capabilities: [cap("bug.fix")] });
    const result = route(indexOf([makeAgent(spec)]), { skill: "bug.fix" }, null);
    expect(result).toEqual({
      agent_type: "bug-fixer",
      nats_subject: "agent.tasks.bug-fixer",
      consumer_group: "bug-fixer",
      version: "2.1.3",
      runtime: "acp-container",
      score: 1,
      candidates: [{ agent_type: "bug-fixer", score: 1 }],
    });
    const noRuntime = route(indexOf([agent("plain", [cap("x")])]), { skill: "x" }, null);
    expect(noRuntime.runtime).toBeNull();
  });

  const noRoute: { name: string; agents: AgentState[]; req: RouteRequest; tenant: string | null }[] = [
    { name: "nothing matches", agents: [agent("a", [cap("x")])], req: { skill: "y", tags: ["t"] }, tenant: null },
    { name: "only non-ready agents match", agents: [agent("a", [cap("x")], {}, { status: "draining" })], req: { skill: "x" }, tenant: null },
    { name: "only another tenant's agent matches", agents: [agent("a", [cap("x")], { tenant_scope: "acme" })], req: { skill: "x" }, tenant: "globex" },
    { name: "empty fleet", agents: [], req: { preferred_runtime: "r" }, tenant: null },
  ];
  it.each(noRoute)("no_route when $name", ({ agents, req, tenant }) => {
    const err = catchError(() => route(indexOf(agents), req, tenant));
    expect(err).toBeInstanceOf(RegistryError);
    expect(err).toMatchObject({ code: "no_route", status: 404 });
  });

  it.each([{}, { tags: [] }, { skill: "" }, { skill: "", tags: [], preferred_runtime: "" }])(
    "invalid_request for a request without criteria: %j",
    (req) => {
      expect(catchError(() => route(indexOf([agent("a", [cap("x")])]), req, null))).toMatchObject({
        code: "invalid_request",
        status: 400,
      });
    },
  );

  it("keeps every score finite and bounded when a stored spec carries a weight from before the bound", () => {
    // Parsed specs cannot carry it any more; a record stored by an older registry can.
    const hog = makeAgent({ ...makeSpec({ agent_type: "hog", capabilities: [cap("x")] }), weight: 1e308 });
    const fair = agent("fair", [cap("x", { tags: ["t"] })], { weight: MAX_WEIGHT }, { registered_at: 0 });
    const result = route(indexOf([hog, fair]), { skill: "x", tags: ["t"] }, null);
    expect(result.agent_type).toBe("fair");
    expect(result.candidates.map((c) => c.score)).toEqual([1500, 1000]);
    expect(JSON.parse(JSON.stringify(result)).candidates.every((c: { score: unknown }) => typeof c.score === "number")).toBe(true);
    expect(routingWeight(Number.POSITIVE_INFINITY)).toBe(MAX_WEIGHT);
    expect(routingWeight(Number.NaN)).toBe(1);
  });

  it("agrees with a full scan on random fleets", () => {
    const tags = ["t1", "t2", "t3"];
    const arbAgent = fc.record({
      caps: fc.uniqueArray(fc.constantFrom("s1", "s2", "s3"), { minLength: 1, maxLength: 3 }),
      tags: fc.subarray(tags),
      runtime: fc.option(fc.constantFrom("r1", "r2"), { nil: undefined }),
      weight: fc.constantFrom(0.5, 1, 1.5, 2),
      status: fc.constantFrom("ready", "ready", "draining", "deregistered" as const),
      registered_at: fc.integer({ min: 0, max: 5 }),
      tenant: fc.constantFrom(null, null, "acme"),
    });
    const arbReq = fc.record(
      { skill: fc.constantFrom("s1", "s2", "s4"), tags: fc.array(fc.constantFrom(...tags, "t9"), { maxLength: 4 }), preferred_runtime: fc.constantFrom("r1", "r2") },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(arbAgent, { maxLength: 8 }), arbReq, fc.constantFrom(null, "acme"), (defs, req, tenant) => {
        const agents = defs.map((d, i) =>
          agent(`agent-${i}`, d.caps.map((c, j) => cap(c, j === 0 ? { tags: d.tags } : {})), { runtime: d.runtime, weight: d.weight, tenant_scope: d.tenant }, { status: d.status, registered_at: d.registered_at }),
        );
        const expected = agents
          .filter((a) => a.status === "ready" && visibleTo(a, tenant))
          .map((a) => {
            const capTags = new Set(a.spec.capabilities.flatMap((c) => c.tags));
            let s = 0;
            if (req.skill && a.spec.capabilities.some((c) => c.name === req.skill)) s += 1;
            s += 0.5 * [...new Set(req.tags ?? [])].filter((t) => capTags.has(t)).length;
            if (req.preferred_runtime && a.spec.runtime === req.preferred_runtime) s += 0.1;
            return { a, score: Math.round(s * a.spec.weight * 1e6) / 1e6 };
          })
          .filter((x) => x.score > 0)
          .sort((x, y) => y.score - x.score || x.a.registered_at - y.a.registered_at || x.a.agent_type.localeCompare(y.a.agent_type));
        const hasCriteria = req.skill !== undefined || (req.tags?.length ?? 0) > 0 || req.preferred_runtime !== undefined;
        const result = catchError(() => route(indexOf(agents), req, tenant));
        if (!hasCriteria) expect(result).toMatchObject({ code: "invalid_request" });
        else if (expected.length === 0) expect(result).toMatchObject({ code: "no_route" });
        else
          expect(result).toMatchObject({
            agent_type: expected[0]?.a.agent_type,
            candidates: expected.map((x) => ({ agent_type: x.a.agent_type, score: x.score })),
          });
      }),
    );
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (e) {
    return e;
  }
}
