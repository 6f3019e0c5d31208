/**
 * The `search` query of PROTOCOL.md section 2: keyword relevance (BM25) over one document
 * per (agent, capability). An inverted index keeps, per term, the documents holding it and
 * their term frequency, so a query reads only the posting lists of its own terms, and an
 * agent's documents are replaced in place when its spec changes. An agent can be indexed one
 * document at a time (begin, addCapability), so the service can spread the work of a burst
 * over many turns of the event loop (service/view/search-indexer.ts).
 */
import type { DeprecationView } from "../../protocol/messages.js";
import type { AgentSpec, Capability } from "../spec/spec.js";
import { isReadOnly } from "./filters.js";

export const BM25 = { k1: 1.2, b: 0.75 } as const;

/**
 * Term-frequency weight of each part of a document. The agent's description (and its
 * representative queries) is shared by all its capabilities, so it counts for less than what
 * describes the capability itself.
 */
export const FIELD_WEIGHTS = { capability: 1, agentDescription: 0.5 } as const;

/**
 * Characters of text indexed per document: of a capability (its name and tags, then the start
 * of its description and of each example, MAX_INDEXED_CHARS.description and .example each),
 * and of the agent's description. They bound the work and memory of one document: 300 specs
 * near the 256 KiB request limit, mostly long examples, took 13 s to index and 470 MB, while a
 * capability is told apart by its first few hundred words (issue 14).
 */
export const MAX_INDEXED_CHARS = { capability: 4_096, description: 2_048, example: 512, agentDescription: 1_024 } as const;

/** The text of a capability's document, within MAX_INDEXED_CHARS. */
export function capabilityText(cap: Capability): string {
  const parts = [cap.name, ...cap.tags, cap.description.slice(0, MAX_INDEXED_CHARS.description)];
  let length = 0;
  for (const p of parts) length += p.length + 1;
  for (const example of cap.examples) {
    if (length >= MAX_INDEXED_CHARS.capability) break;
    const part = example.slice(0, MAX_INDEXED_CHARS.example);
    parts.push(part);
    length += part.length + 1;
  }
  return parts.join(" ").slice(0, MAX_INDEXED_CHARS.capability);
}

// Words too common to say anything about a capability. Kept short on purpose: "find",
// "fix" or "search" carry meaning here and must stay.
const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can could do does for from has have how i in into is it its " +
    "me my of on or our please should so that the their them then there these they this those " +
    "to us was we were what when where which who will with would you your"
  ).split(" "),
);

const VOWEL = /[aeiouy]/;

/**
 * A light suffix stemmer: plurals (-s, -es, -ies), -ing and -ed, then a final -e, so that
 * "fixes", "fixed", "fixing" and "fix" meet, and so do "translate" and "translating".
 * It only has to map a word and its variants to the same key, not produce real words.
 */
export function stem(word: string): string {
  if (word.length <= 2 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w) && w.length > 3) w = w.slice(0, -1);

  let stripped = false;
  for (const suffix of ["ing", "ed"]) {
    // "need"/"speed" keep their -ed; "bring"/"string" keep -ing (no vowel left before it).
    if (!w.endsWith(suffix) || (suffix === "ed" && w.endsWith("eed"))) continue;
    const base = w.slice(0, -suffix.length);
    if (base.length >= 2 && VOWEL.test(base)) {
      w = base;
      stripped = true;
    }
    break;
  }
  // "mapping" -> "mapp" -> "map", but "filling" -> "fill", "missing" -> "miss", "added" -> "add".
  if (stripped && w.length > 3 && /([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("e") && !w.endsWith("ee") && w.length >= 3) w = w.slice(0, -1);
  return w;
}

/** Lower-cases, drops accents and apostrophes, splits on anything but letters and digits, drops stop words, stems. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const normalized = text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/['’]/g, "");
  for (const word of normalized.split(/[^\p{L}\p{N}]+/u)) {
    if (word.length === 0 || STOP_WORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

/** `deprecated` (v1.2) is added by the query from the view, not kept in the index. */
export type SearchResult = { readonly agent_type: string; readonly capability: string; readonly score: number; readonly deprecated?: DeprecationView };

/** `readOnly`: the capability's annotations say readOnlyHint true (the `read_only` filter, filters.ts). */
type Doc = { readonly agentType: string; readonly capability: string; readonly length: number; readonly readOnly: boolean };

/** What a search keeps beyond the agent filter: with `readOnly`, read-only capabilities only. */
export type SearchOptions = { readonly readOnly?: boolean | undefined };

/**
 * The documents holding a term, as parallel arrays (doc id, weighted term frequency) in the
 * order they were added. A Map per term cost about 40 bytes a posting, arrays of numbers cost
 * 16: the index of 10,000 agent types went from 52 to 31 MB (docs/performance.md). Removal
 * filters the arrays, which only a spec change or a removed agent type pays for.
 */
type Postings = { readonly term: string; ids: number[]; tfs: number[]; /** The last build that added to it. */ build: number };

export class SearchIndex {
  private readonly docs = new Map<number, Doc>();
  private readonly postings = new Map<string, Postings>();
  /** agent type -> its doc ids and the posting lists holding them, to remove them without a scan. */
  private readonly byAgent = new Map<string, { spec: AgentSpec; ids: number[]; lists: Postings[]; build: number }>();
  private nextId = 0;
  private totalLength = 0;
  private builds = 0;

  /**
   * Replaces the documents of an agent type with those of `spec`; `undefined` removes them.
   * The view notifies on status changes too, with the same spec object: specs are immutable
   * values (a new spec is a new object), so the same object is not tokenized again.
   */
  update(agentType: string, spec: AgentSpec | undefined): void {
    if (spec !== undefined && this.has(agentType, spec)) return;
    if (!spec) return this.remove(agentType);
    this.begin(agentType, spec);
    const agentTerms = agentTermsOf(spec);
    for (let i = 0; i < spec.capabilities.length; i++) this.addCapability(agentType, i, agentTerms);
  }

  /** Whether every document of this very spec is indexed for the agent type. */
  has(agentType: string, spec: AgentSpec): boolean {
    const entry = this.byAgent.get(agentType);
    return entry !== undefined && entry.spec === spec && entry.ids.length === spec.capabilities.length;
  }

  /** Replaces what the agent type had by an empty entry for `spec`, to which addCapability adds its documents. */
  begin(agentType: string, spec: AgentSpec): void {
    this.remove(agentType);
    this.byAgent.set(agentType, { spec, ids: [], lists: [], build: ++this.builds });
  }

  /** Adds the document of `spec.capabilities[index]` of the spec begun for the agent type; `agentTerms` from agentTermsOf. */
  addCapability(agentType: string, index: number, agentTerms: readonly string[]): void {
    const entry = this.byAgent.get(agentType);
    const cap = entry?.spec.capabilities[index];
    if (!entry || !cap) return;
    const tf = new Map<string, number>();
    const add = (terms: readonly string[], weight: number): void => {
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + weight);
    };
    add(tokenize(capabilityText(cap)), FIELD_WEIGHTS.capability);
    add(agentTerms, FIELD_WEIGHTS.agentDescription);
    let length = 0;
    for (const n of tf.values()) length += n;

    const id = this.nextId++;
    this.docs.set(id, { agentType, capability: cap.name, length, readOnly: isReadOnly(cap) });
    this.totalLength += length;
    entry.ids.push(id);
    for (const [term, n] of tf) {
      let list = this.postings.get(term);
      if (!list) {
        list = { term, ids: [], tfs: [], build: 0 };
        this.postings.set(term, list);
      }
      list.ids.push(id);
      list.tfs.push(n);
      // Each list once per agent, without a set per agent: the list remembers the last build that added to it.
      if (list.build !== entry.build) {
        list.build = entry.build;
        entry.lists.push(list);
      }
    }
  }

  /**
   * The `limit` best (agent_type, capability) pairs for `text`, among agent types that
   * `filter` admits (visibility, status, kind) and capabilities `options` admit. Scores are
   * rounded to 4 decimals; ties are ordered by agent_type then capability so replicas answer
   * identically. Filtered documents still count in the statistics (document count, average
   * length), so a filter narrows the results without changing their scores.
   */
  query(text: string, limit: number, filter: (agentType: string) => boolean, options: SearchOptions = {}): SearchResult[] {
    const readOnly = options.readOnly === true;
    if (limit <= 0 || this.docs.size === 0) return [];
    const terms = [...new Set(tokenize(text))];
    const n = this.docs.size;
    const avgLength = this.totalLength / n || 1;
    const admitted = new Map<string, boolean>();
    const scores = new Map<number, number>();

    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      // The BM25 idf with +1 inside the log, so a term present everywhere still scores >= 0.
      const df = list.ids.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let k = 0; k < df; k++) {
        const id = list.ids[k]!;
        const tf = list.tfs[k]!;
        const doc = this.docs.get(id) as Doc;
        if (readOnly && !doc.readOnly) continue;
        let ok = admitted.get(doc.agentType);
        if (ok === undefined) {
          ok = filter(doc.agentType);
          admitted.set(doc.agentType, ok);
        }
        if (!ok) continue;
        const norm = BM25.k1 * (1 - BM25.b + (BM25.b * doc.length) / avgLength);
        scores.set(id, (scores.get(id) ?? 0) + (idf * tf * (BM25.k1 + 1)) / (tf + norm));
      }
    }

    const results: SearchResult[] = [];
    for (const [id, raw] of scores) {
      const score = Math.round(raw * 1e4) / 1e4;
      if (score <= 0) continue;
      const doc = this.docs.get(id) as Doc;
      results.push({ agent_type: doc.agentType, capability: doc.capability, score });
    }
    results.sort((a, b) => b.score - a.score || cmp(a.agent_type, b.agent_type) || cmp(a.capability, b.capability));
    return results.slice(0, limit);
  }

  /** Number of indexed (agent, capability) documents. */
  get size(): number {
    return this.docs.size;
  }

  /** Number of distinct indexed terms (lets tests check that removal leaves nothing behind). */
  get termCount(): number {
    return this.postings.size;
  }

  /** Drops every document of the agent type. */
  remove(agentType: string): void {
    const entry = this.byAgent.get(agentType);
    if (!entry) return;
    const gone = new Set(entry.ids);
    for (const list of entry.lists) {
      let kept = 0;
      for (let k = 0; k < list.ids.length; k++) {
        if (gone.has(list.ids[k]!)) continue;
        list.ids[kept] = list.ids[k]!;
        list.tfs[kept] = list.tfs[k]!;
        kept++;
      }
      list.ids.length = kept;
      list.tfs.length = kept;
      if (kept === 0) this.postings.delete(list.term);
    }
    for (const id of entry.ids) {
      this.totalLength -= (this.docs.get(id) as Doc).length;
      this.docs.delete(id);
    }
    this.byAgent.delete(agentType);
  }
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The terms that describe the agent as a whole, shared by every document of the spec: its
 * description and its representative queries (v1.2; at most 5 of 512 characters, so bounded).
 */
export const agentTermsOf = (spec: AgentSpec): string[] => [
  ...tokenize(spec.description.slice(0, MAX_INDEXED_CHARS.agentDescription)),
  ...(spec.representative_queries ?? []).flatMap((q) => tokenize(q.slice(0, MAX_INDEXED_CHARS.example))),
];
