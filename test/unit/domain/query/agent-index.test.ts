import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AgentIndex, indexAfter } from "../../../../src/domain/query/agent-index.js";
import { CapabilityIndex } from "../../../../src/domain/view/capability-index.js";
import type { AgentState } from "../../../../src/domain/model/model.js";
import { cap, makeAgent, makeSpec } from "../../fixtures.js";

const reviewer = makeAgent(
  makeSpec({
    agent_type: "reviewer",
    owner_team: "platform",
    runtime: "copilot-bridge",
    tags: { env: "prod", "a:b": "c" },
    capabilities: [cap("code.review", { tags: ["code", "review"] }), cap("code.lint", { tags: ["code", "style"] })],
  }),
);
const translator = makeAgent(
  makeSpec({
    agent_type: "translator",
    owner_team: "l10n",
    runtime: "acp-container",
    tags: { env: "prod" },
    capabilities: [cap("text.translate", { tags: ["text"] })],
  }),
);

const sorted = (s: ReadonlySet<string>) => [...s].sort();

describe("AgentIndex", () => {
  it("answers each lookup from its own set", () => {
    const index = new AgentIndex();
    index.update("reviewer", reviewer);
    index.update("translator", translator);

    expect(index.get("reviewer")).toBe(reviewer);
    expect(index.get("nobody")).toBeUndefined();
    expect(sorted(index.byCapability("code.review"))).toEqual(["reviewer"]);
    expect(sorted(index.byTag("code"))).toEqual(["reviewer"]);
    expect(sorted(index.byTag("style"))).toEqual(["reviewer"]);
    expect(sorted(index.byTag("text"))).toEqual(["translator"]);
    expect(sorted(index.bySpecTag("env", "prod"))).toEqual(["reviewer", "translator"]);
    expect(sorted(index.bySpecTag("a:b", "c"))).toEqual(["reviewer"]);
    // A separator inside a key or value must not make two pairs collide.
    expect(index.bySpecTag("a", "b:c").size).toBe(0);
    expect(sorted(index.byRuntime("acp-container"))).toEqual(["translator"]);
    expect(sorted(index.byOwner("platform"))).toEqual(["reviewer"]);
    expect(index.byOwner("nobody").size).toBe(0);
    expect(index.sortedTypes()).toEqual(["reviewer", "translator"]);
    expect([...index.all()].map((a) => a.agent_type).sort()).toEqual(["reviewer", "translator"]);
    expect(index.size).toBe(2);
  });

  it("moves an agent between sets when its spec changes", () => {
    const index = new AgentIndex();
    index.update("reviewer", reviewer);
    const changed = makeAgent(
      makeSpec({ agent_type: "reviewer", owner_team: "security", capabilities: [cap("code.audit", { tags: ["security"] })] }),
    );
    index.update("reviewer", changed);

    expect(index.byCapability("code.review").size).toBe(0);
    expect(index.byTag("code").size).toBe(0);
    expect(index.byRuntime("copilot-bridge").size).toBe(0);
    expect(index.bySpecTag("env", "prod").size).toBe(0);
    expect(index.byOwner("platform").size).toBe(0);
    expect(sorted(index.byCapability("code.audit"))).toEqual(["reviewer"]);
    expect(sorted(index.byOwner("security"))).toEqual(["reviewer"]);
    expect(index.sortedTypes()).toEqual(["reviewer"]);
  });

  it("is idempotent: the same or an equal state twice changes nothing", () => {
    const index = new AgentIndex();
    index.update("reviewer", reviewer);
    index.update("reviewer", reviewer);
    index.update("reviewer", { ...reviewer });
    expect(index.sortedTypes()).toEqual(["reviewer"]);
    expect(sorted(index.byTag("code"))).toEqual(["reviewer"]);
    index.update("reviewer", undefined);
    index.update("reviewer", undefined);
    expect(index.size).toBe(0);
    expect(index.sortedTypes()).toEqual([]);
    expect(index.byTag("code").size).toBe(0);
  });

  it("reindexes an agent object that was changed in place (the view mutates its agents)", () => {
    const index = new AgentIndex();
    const mutable = { ...reviewer } as { -readonly [K in keyof AgentState]: AgentState[K] };
    index.update("reviewer", mutable);
    mutable.spec = makeSpec({ agent_type: "reviewer", capabilities: [cap("code.audit", { tags: ["security"] })] });
    index.update("reviewer", mutable);
    expect(index.byCapability("code.review").size).toBe(0);
    expect(index.byTag("code").size).toBe(0);
    expect(sorted(index.byCapability("code.audit"))).toEqual(["reviewer"]);
    expect(index.get("reviewer")).toBe(mutable);
  });

  it("keeps deregistered agents (get and list show them); callers filter on status", () => {
    const index = new AgentIndex();
    const gone = makeAgent(translator.spec, { status: "deregistered" });
    index.update("translator", gone);
    expect(index.get("translator")?.status).toBe("deregistered");
    expect(sorted(index.byCapability("text.translate"))).toEqual(["translator"]);
  });

  it("matches a plain map model under random updates and removals", () => {
    const names = ["a", "b", "c", "a-1", "b_2", "zz", "m0"];
    const caps = ["x", "y", "z"];
    const op = fc.record({
      name: fc.constantFrom(...names),
      remove: fc.boolean(),
      caps: fc.uniqueArray(fc.constantFrom(...caps), { minLength: 1 }),
      runtime: fc.constantFrom("r1", "r2"),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const index = new AgentIndex();
        const model = new Map<string, AgentState>();
        for (const o of ops) {
          const state = o.remove
            ? undefined
            : makeAgent(makeSpec({ agent_type: o.name, runtime: o.runtime, capabilities: o.caps.map((c) => cap(c, { tags: [`t-${c}`] })) }));
          index.update(o.name, state);
          if (state) model.set(o.name, state);
          else model.delete(o.name);
        }
        expect(index.sortedTypes()).toEqual([...model.keys()].sort());
        for (const c of caps) {
          const expected = [...model.values()].filter((a) => a.spec.capabilities.some((x) => x.name === c)).map((a) => a.agent_type);
          expect(sorted(index.byCapability(c))).toEqual(expected.sort());
          expect(sorted(index.byTag(`t-${c}`))).toEqual(expected.sort());
        }
        for (const r of ["r1", "r2"]) {
          const expected = [...model.values()].filter((a) => a.spec.runtime === r).map((a) => a.agent_type);
          expect(sorted(index.byRuntime(r))).toEqual(expected.sort());
        }
      }),
    );
  });
});

describe("indexAfter", () => {
  const types = ["alpha", "beta", "gamma"];
  it.each([
    ["", 0],
    ["alpha", 1],
    ["alpha0", 1],
    ["beta", 2],
    ["gamma", 3],
    ["zzz", 3],
  ] as const)("after %j starts at %i", (cursor, at) => {
    expect(indexAfter(types, cursor)).toBe(at);
  });
});

describe("AgentIndex over the view's capability index", () => {
  it("keeps no capability sets of its own: it answers from the structure it was given", () => {
    const shared = new CapabilityIndex();
    const index = new AgentIndex(shared);
    index.update("reviewer", reviewer);
    expect(index.byCapability("code.review").size).toBe(0); // the view has not indexed it
    shared.add("reviewer", reviewer.spec);
    expect(sorted(index.byCapability("code.review"))).toEqual(["reviewer"]);
    expect(index.byCapability("code.review")).toBe(shared.providersOf("code.review"));
    index.update("reviewer", undefined);
    expect(sorted(index.byCapability("code.review"))).toEqual(["reviewer"]); // still the view's to remove
  });
});
