import { describe, expect, it } from "vitest";
import { MAX_INDEXED_CHARS, SearchIndex, capabilityText, stem, tokenize } from "../../../../src/domain/query/search.js";
import { cap, exampleSpecs, makeSpec } from "../../fixtures.js";

const all = (): boolean => true;

function catalogue(): SearchIndex {
  const index = new SearchIndex();
  for (const spec of exampleSpecs()) index.update(spec.agent_type, spec);
  return index;
}

const top = (index: SearchIndex, q: string) => {
  const [first] = index.query(q, 10, all);
  return first && `${first.agent_type}/${first.capability}`;
};

describe("tokenize", () => {
  it.each([
    ["Fix a nil-pointer dereference bug", ["fix", "nil", "pointer", "dereferenc", "bug"]],
    ["find the nil pointer bug", ["find", "nil", "pointer", "bug"]],
    ["product.search, code_review: TEST-CASES!", ["product", "search", "cod", "review", "test", "cas"]],
    ["Don't  résumé   ÉTÉ", ["dont", "resum", "et"]],
    ["the and of to", []],
    ["", []],
  ])("%j", (text, tokens) => {
    expect(tokenize(text)).toEqual(tokens);
  });
});

describe("stem", () => {
  it.each([
    ["fixes", "fixed", "fixing", "fix"],
    ["translates", "translated", "translating", "translate"],
    ["queries", "query", "query", "query"],
    ["bugs", "bug", "bug", "bug"],
    ["maps", "mapped", "mapping", "map"],
    ["uses", "used", "using", "use"],
  ])("%s, %s, %s and %s meet", (...words) => {
    expect(new Set(words.map(stem)).size).toBe(1);
  });

  it.each(["status", "analysis", "class", "string", "need", "fill", "add", "s3", "go"])("%s is kept whole", (w) => {
    expect(stem(w)).toBe(w);
  });
});

describe("SearchIndex on the example catalogue", () => {
  const index = catalogue();

  it.each([
    ["find the nil pointer bug", "bug-fixer/bug.fix"],
    ["translate this paragraph into French", "translator/text.translate"],
    ["summarize the meeting transcript", "summarizer/text.summarize"],
    ["search waterproof jackets", "product-search/product.search"],
    ["security audit for SQL injection", "code-reviewer/code.security_audit"],
    ["why is my query so slow", "sql-analyst/data.explain_query"],
    ["review this pull request", "code-reviewer/code.review"],
    ["write a README", "doc-writer/docs.write"],
  ])("%j ranks %s first", (q, expected) => {
    expect(top(index, q)).toBe(expected);
  });

  it("ignores case and punctuation", () => {
    const plain = index.query("nil pointer bug", 10, all);
    expect(index.query("NIL-POINTER!!! Bug??", 10, all)).toEqual(plain);
    expect(index.query("nil_pointer...BUG", 10, all)).toEqual(plain);
  });

  it("rounds scores to 4 decimals and sorts them descending", () => {
    const results = index.query("code review bug sql", 50, all);
    expect(results.length).toBeGreaterThan(3);
    for (const r of results) expect(Math.round(r.score * 1e4) / 1e4).toBe(r.score);
    for (let i = 1; i < results.length; i++) expect(results[i - 1]!.score).toBeGreaterThanOrEqual(results[i]!.score);
  });

  it("honours limit, and finds nothing for stop words or unknown words", () => {
    expect(index.query("code", 2, all)).toHaveLength(2);
    expect(index.query("code", 0, all)).toEqual([]);
    expect(index.query("the of and", 10, all)).toEqual([]);
    expect(index.query("xylophone", 10, all)).toEqual([]);
  });

  it("matches the agent description too, but less than the capability's own text", () => {
    // "crashes" is only in bug-fixer's agent description: both its capabilities match.
    const results = index.query("crashes", 10, all);
    expect(results.map((r) => r.agent_type)).toEqual(["bug-fixer", "bug-fixer"]);
    // bug.triage also says "crash" in an example, so it ranks above bug.fix.
    expect(results[0]?.capability).toBe("bug.triage");
  });
});

describe("SearchIndex updates", () => {
  it("filters by agent type (tenant visibility) before ranking", () => {
    const index = catalogue();
    const results = index.query("find the nil pointer bug", 10, (t) => t !== "bug-fixer");
    expect(results.some((r) => r.agent_type === "bug-fixer")).toBe(false);
    expect(results.length).toBeGreaterThan(0);
  });

  it("keeps read-only capabilities only when asked, scoring them as without the filter", () => {
    const capabilities = [
      cap("read_file", { description: "read a file from disk", annotations: { readOnlyHint: true } }),
      cap("write_file", { description: "write a file to disk", annotations: { readOnlyHint: false } }),
      cap("delete_file", { description: "delete a file from disk" }),
    ];
    const index = new SearchIndex();
    index.update("files", makeSpec({ agent_type: "files", kind: "mcp_server", capabilities }));
    const unfiltered = index.query("file disk", 10, all);
    expect(unfiltered.map((r) => r.capability).sort()).toEqual(["delete_file", "read_file", "write_file"]);
    const readOnly = index.query("file disk", 10, all, { readOnly: true });
    expect(readOnly).toEqual(unfiltered.filter((r) => r.capability === "read_file"));
    expect(index.query("file disk", 10, all, { readOnly: false })).toEqual(unfiltered);
  });

  it("removes an agent's documents and terms, and adds them back", () => {
    const index = catalogue();
    const before = index.query("find the nil pointer bug", 10, all);
    const { size, termCount } = index;
    const bugFixer = exampleSpecs().find((s) => s.agent_type === "bug-fixer")!;

    index.update("bug-fixer", undefined);
    expect(index.size).toBe(size - 2);
    expect(index.query("nil pointer", 10, all)).toEqual([]);
    expect(index.termCount).toBeLessThan(termCount);

    index.update("bug-fixer", bugFixer);
    expect(index.size).toBe(size);
    expect(index.termCount).toBe(termCount);
    expect(index.query("find the nil pointer bug", 10, all)).toEqual(before);
  });

  it("is the same whether built at once or updated repeatedly", () => {
    const specs = exampleSpecs();
    const fresh = catalogue();
    const churned = new SearchIndex();
    for (const s of specs) churned.update(s.agent_type, makeSpec({ agent_type: s.agent_type, description: "placeholder words" }));
    for (const s of specs) churned.update(s.agent_type, s);
    for (const s of specs) churned.update(s.agent_type, s);
    for (const q of ["code review", "find the nil pointer bug", "translate text", "sql"]) {
      expect(churned.query(q, 20, all)).toEqual(fresh.query(q, 20, all));
    }
  });

  it("replaces capabilities when a spec changes", () => {
    const index = new SearchIndex();
    index.update("a", makeSpec({ agent_type: "a", capabilities: [cap("old.thing", { description: "legacy parser" })] }));
    index.update("a", makeSpec({ agent_type: "a", capabilities: [cap("new.thing", { description: "modern parser" })] }));
    expect(index.query("legacy", 10, all)).toEqual([]);
    expect(index.query("parser", 10, all).map((r) => r.capability)).toEqual(["new.thing"]);
    index.update("a", undefined);
    expect(index.size).toBe(0);
    expect(index.termCount).toBe(0);
    expect(index.query("parser", 10, all)).toEqual([]);
  });

  it("indexes the start of long descriptions and of every example, within MAX_INDEXED_CHARS", () => {
    const filler = (n: number) => "lorem ".repeat(n);
    const long = cap("long.one", {
      description: `${filler(10)} early ${filler(400)} buried`,
      examples: [`first ${filler(200)} hidden`, `second ${filler(10)}`, ...Array.from({ length: 60 }, (_, i) => `ex${i} ${filler(100)}`)],
    });
    const index = new SearchIndex();
    const spec = makeSpec({ agent_type: "a", description: `${filler(10)} agentword ${filler(500)} agentburied`, capabilities: [long] });
    index.update("a", spec);
    for (const found of ["early", "first", "second", "agentword"]) expect(index.query(found, 1, all), found).toHaveLength(1);
    for (const missed of ["buried", "hidden", "ex59", "agentburied"]) expect(index.query(missed, 1, all), missed).toEqual([]);
    expect(capabilityText(spec.capabilities[0]!).length).toBeLessThanOrEqual(MAX_INDEXED_CHARS.capability);
  });

  it("orders equal scores by agent_type then capability", () => {
    const index = new SearchIndex();
    const caps = [cap("scan.two", { description: "virus scan" }), cap("scan.one", { description: "virus scan" })];
    for (const t of ["zeta", "alpha"]) index.update(t, makeSpec({ agent_type: t, description: "same", capabilities: caps }));
    expect(index.query("virus", 10, all).map((r) => `${r.agent_type}/${r.capability}`)).toEqual([
      "alpha/scan.one",
      "alpha/scan.two",
      "zeta/scan.one",
      "zeta/scan.two",
    ]);
  });
});

describe("representative queries (v1.2)", () => {
  it("rank an agent for the words its callers use, though no capability has them", () => {
    const index = new SearchIndex();
    const plain = makeSpec({ agent_type: "plain", description: "an agent", capabilities: [cap("doc.convert", { description: "converts files" })] });
    const asked = makeSpec({
      agent_type: "asked",
      description: "an agent",
      capabilities: [cap("doc.transform", { description: "converts files" })],
      representative_queries: ["turn my spreadsheet into a pdf", "export the quarterly deck"],
    });
    index.update("plain", plain);
    index.update("asked", asked);
    expect(top(index, "spreadsheet pdf")).toBe("asked/doc.transform");
    expect(index.query("spreadsheet pdf", 10, all).map((r) => r.agent_type)).toEqual(["asked"]);
  });
});
