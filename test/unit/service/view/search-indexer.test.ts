import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SearchIndex } from "../../../../src/domain/query/search.js";
import type { AgentSpec } from "../../../../src/domain/spec/spec.js";
import type { AgentState } from "../../../../src/domain/model/model.js";
import { SearchIndexer } from "../../../../src/service/view/search-indexer.js";
import { cap, exampleSpecs, makeAgent, makeSpec } from "../../fixtures.js";

const all = (): boolean => true;
const QUERIES = ["find the nil pointer bug", "translate this paragraph", "summarize", "search jackets", "review code", "sql query slow", "alpha beta"];
const agent = (spec: AgentSpec): AgentState => makeAgent(spec);

async function caughtUp(indexer: SearchIndexer): Promise<void> {
  for (let p = indexer.caughtUp(); p; p = indexer.caughtUp()) await p;
}

describe("SearchIndexer", () => {
  it("only notes changes until the first search asks, then keeps up by itself", async () => {
    const indexer = new SearchIndexer();
    for (const spec of exampleSpecs()) indexer.update(spec.agent_type, agent(spec));
    await new Promise((r) => setTimeout(r, 20));
    expect(indexer.index.size).toBe(0);
    expect(indexer.pending).toBe(exampleSpecs().length);
    await caughtUp(indexer);
    expect(indexer.idle).toBe(true);
    expect(indexer.index.query("find the nil pointer bug", 1, all)[0]).toMatchObject({ agent_type: "bug-fixer" });
    // Active now: a change is indexed without another search.
    indexer.update("late", agent(makeSpec({ agent_type: "late", capabilities: [cap("late.zebra", { description: "zebra crossing" })] })));
    await new Promise((r) => setTimeout(r, 20));
    expect(indexer.idle).toBe(true);
    expect(indexer.index.query("zebra", 1, all)[0]).toMatchObject({ agent_type: "late" });
    indexer.update("late", undefined);
    await new Promise((r) => setTimeout(r, 20));
    expect(indexer.index.query("zebra", 1, all)).toEqual([]);
  });

  it("indexes a burst in slices, with turns of the event loop between them", async () => {
    const indexer = new SearchIndexer();
    const long = (n: number) => Array.from({ length: 400 }, (_, i) => `word${(i * n) % 997}`).join(" ");
    for (let t = 0; t < 300; t++) {
      const capabilities = Array.from({ length: 8 }, (_, i) => cap(`c${t}.k${i}`, { description: long(t + i), examples: [long(t * i + 1), long(t + 7)] }));
      indexer.update(`a${t}`, agent(makeSpec({ agent_type: `a${t}`, capabilities })));
    }
    let turns = 0;
    let done = false;
    const turn = (): void => {
      turns++;
      if (!done) setImmediate(turn);
    };
    setImmediate(turn);
    await caughtUp(indexer);
    done = true;
    expect(indexer.index.size).toBe(2400);
    expect(turns).toBeGreaterThan(2);
  });

  it("ends with the index a plain rebuild of the final state gives, whatever the order of changes (property)", async () => {
    const pool = [...exampleSpecs(), makeSpec({ agent_type: "bug-fixer", description: "a second bug fixer", capabilities: [cap("bug.fix", { description: "alpha beta fixes" })] })];
    const change = fc.record({ spec: fc.nat({ max: pool.length }), pause: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(change, { maxLength: 30 }), fc.boolean(), async (changes, searchFirst) => {
        const indexer = new SearchIndexer();
        if (searchFirst) await caughtUp(indexer);
        const final = new Map<string, AgentSpec | undefined>();
        for (const { spec: k, pause } of changes) {
          const spec = pool[k];
          const type = spec?.agent_type ?? pool[changes.length % pool.length]!.agent_type;
          indexer.update(type, spec ? agent(spec) : undefined);
          final.set(type, spec);
          if (pause) await new Promise((r) => setImmediate(r));
        }
        await caughtUp(indexer);
        const rebuilt = new SearchIndex();
        for (const [type, spec] of final) rebuilt.update(type, spec);
        for (const q of QUERIES) expect(indexer.index.query(q, 10, all), q).toEqual(rebuilt.query(q, 10, all));
        expect(indexer.index.size).toBe(rebuilt.size);
        expect(indexer.index.termCount).toBe(rebuilt.termCount);
      }),
      { numRuns: 100 },
    );
  });

  it("leaves an agent type out of search, and goes on, when indexing it throws", async () => {
    const errors: Array<string | undefined> = [];
    const indexer = new SearchIndexer((_err, type) => errors.push(type));
    const real = indexer.index.addCapability.bind(indexer.index);
    indexer.index.addCapability = (type, i, terms) => {
      if (type === "translator") throw new Error("bug");
      real(type, i, terms);
    };
    for (const spec of exampleSpecs()) indexer.update(spec.agent_type, agent(spec));
    await caughtUp(indexer);
    expect(errors).toEqual(["translator"]);
    expect(indexer.index.query("translate this paragraph into French", 10, all).map((r) => r.agent_type)).not.toContain("translator");
    expect(indexer.index.query("find the nil pointer bug", 1, all)[0]).toMatchObject({ agent_type: "bug-fixer" });
  });
});
