/**
 * The `filter` and `orderBy` of ARD's `GET /agents` (ard-spec section 7.4 and appendix A). The
 * spec gives the fields (displayName, type, publisherId, createdAfter, updatedAfter), AND across
 * fields and OR within one (comma-separated), and an example, `type =
 * 'application/mcp-server-card+json' AND createdAfter > '2026-01-01'`, but no grammar. This
 * front reads exactly this one (docs/discovery.md):
 *
 *   filter    = condition , { "AND" , condition } ;
 *   condition = field , ( "=" | ":" ) , values | date-field , ( ">" | "=" | ":" ) , date ;
 *   field     = "displayName" | "type" | "publisherId" ;
 *   date-field = "createdAfter" | "updatedAfter" ;
 *   values    = value , { "," , value } ;         (OR; a quoted value may hold commas too)
 *   value     = quoted | bare ;
 *   quoted    = "'" , { any character but "'" | "''" } , "'"  (or the same with '"') ;
 *   bare      = { any character but whitespace, quotes, "," } ;
 *   orderBy   = key , { "," , key } ;   key = ( "displayName" | "name" | "identifier" |
 *               "createdAt" | "updatedAt" ) , [ "ASC" | "DESC" ] ;
 *
 * `AND`, `ASC` and `DESC` in any case. displayName matches when the entry's display name holds
 * the value, ignoring case; type and publisherId are equal, ignoring case; a date is ISO 8601 (a
 * date alone is its midnight UTC), and an entry is after it when its time is later. Anything
 * else is a 400 naming what was expected: a filter read loosely would answer a wrong list.
 */
import { invalidArgument } from "./ard-error.js";
import type { CatalogEntry } from "./catalog-entry.js";

export const MAX_FILTER_LENGTH = 2048;
const MAX_CONDITIONS = 16;
const MAX_VALUES = 100;
const STRING_FIELDS = ["displayName", "type", "publisherId"] as const;
const DATE_FIELDS = ["createdAfter", "updatedAfter"] as const;
const ORDER_KEYS = ["displayName", "name", "identifier", "createdAt", "updatedAt"] as const;
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}([Tt]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

type StringField = (typeof STRING_FIELDS)[number];
type DateField = (typeof DATE_FIELDS)[number];
export type ListFilter = {
  strings: Map<StringField, string[]>;
  dates: Map<DateField, number>;
};
export type OrderKey = { key: "displayName" | "identifier" | "createdAt" | "updatedAt"; descending: boolean };

/** What an entry is filtered and ordered on beyond its own fields: when its agent type was first registered. */
export type ListedEntry = { entry: CatalogEntry; createdAt: string };

type Token = { kind: "word" | "quoted" | "op" | "comma"; text: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "," ) {
      tokens.push({ kind: "comma", text: c });
      i++;
    } else if (c === "=" || c === ":" || c === ">") {
      tokens.push({ kind: "op", text: c });
      i++;
    } else if (c === "'" || c === '"') {
      let value = "";
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw invalidArgument(`filter: the quoted value at character ${i + 1} is not closed`);
        if (text[j] === c) {
          if (text[j + 1] === c) {
            value += c;
            j += 2;
            continue;
          }
          break;
        }
        value += text[j];
        j++;
      }
      tokens.push({ kind: "quoted", text: value });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s,=:>'"]/.test(text[j]!)) j++;
      tokens.push({ kind: "word", text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

const quote = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s);

/** The filter of one `GET /agents`, or undefined for none; 400 INVALID_ARGUMENT naming what is wrong. */
export function parseListFilter(text: string | undefined): ListFilter | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  if (text.length > MAX_FILTER_LENGTH) throw invalidArgument(`filter is ${text.length} characters; at most ${MAX_FILTER_LENGTH}`);
  const tokens = tokenize(text);
  const filter: ListFilter = { strings: new Map(), dates: new Map() };
  let at = 0;
  let conditions = 0;
  const next = () => tokens[at++];
  for (;;) {
    if (++conditions > MAX_CONDITIONS) throw invalidArgument(`filter has more than ${MAX_CONDITIONS} conditions`);
    const field = next();
    if (field?.kind !== "word" || ![...STRING_FIELDS, ...DATE_FIELDS].includes(field.text as StringField)) {
      throw invalidArgument(`filter: expected a field (${[...STRING_FIELDS, ...DATE_FIELDS].join(", ")}), found ${field ? quote(field.text) : "the end"}`);
    }
    const op = next();
    const isDate = (DATE_FIELDS as readonly string[]).includes(field.text);
    if (op?.kind !== "op" || (op.text === ">" && !isDate)) {
      throw invalidArgument(`filter: ${field.text} takes ${isDate ? '">" or "="' : '"="'} then a value, found ${op ? quote(op.text) : "the end"}`);
    }
    const values: string[] = [];
    for (;;) {
      const value = next();
      if (value?.kind !== "word" && value?.kind !== "quoted") throw invalidArgument(`filter: ${field.text} ${op.text} needs a value, found ${value ? quote(value.text) : "the end"}`);
      values.push(...(value.kind === "quoted" ? value.text.split(",") : [value.text]).map((v) => v.trim()).filter((v) => v !== ""));
      if (tokens[at]?.kind !== "comma") break;
      at++;
    }
    if (values.length === 0 || values.length > MAX_VALUES) throw invalidArgument(`filter: ${field.text} takes 1 to ${MAX_VALUES} values`);
    if (isDate) {
      if (values.length !== 1) throw invalidArgument(`filter: ${field.text} takes one date`);
      filter.dates.set(field.text as DateField, parseDate(field.text, values[0]!));
    } else {
      const name = field.text as StringField;
      if (filter.strings.has(name)) throw invalidArgument(`filter: ${name} is given twice; give its values once, comma-separated (OR)`);
      filter.strings.set(name, values.map((v) => v.toLowerCase()));
    }
    const joiner = next();
    if (joiner === undefined) return filter;
    if (joiner.kind !== "word" || joiner.text.toUpperCase() !== "AND") throw invalidArgument(`filter: expected AND or the end after a condition, found ${quote(joiner.text)}`);
  }
}

function parseDate(field: string, value: string): number {
  const ms = ISO_DATE_RE.test(value) ? Date.parse(/T/i.test(value) && !/([Zz]|[+-]\d{2}:\d{2})$/.test(value) ? `${value}Z` : value) : NaN;
  if (!Number.isFinite(ms)) throw invalidArgument(`filter: ${field} takes an ISO 8601 date such as 2026-01-01 or 2026-01-01T12:00:00Z, not ${quote(value)}`);
  return ms;
}

/** Whether an entry passes every condition (AND), each holding one of its values (OR). */
export function passesListFilter({ entry, createdAt }: ListedEntry, filter: ListFilter): boolean {
  for (const [field, values] of filter.strings) {
    if (field === "displayName") {
      const name = entry.displayName.toLowerCase();
      if (!values.some((v) => name.includes(v))) return false;
    } else {
      const actual = (field === "type" ? entry.type : (entry.identifier.split(":")[2] ?? "")).toLowerCase();
      if (!values.includes(actual)) return false;
    }
  }
  for (const [field, after] of filter.dates) {
    const time = Date.parse(field === "createdAfter" ? createdAt : (entry.updatedAt ?? createdAt));
    if (!(time > after)) return false;
  }
  return true;
}

/** `orderBy` as sort keys, or undefined for the registry's own order. */
export function parseOrderBy(text: string | undefined): OrderKey[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  if (text.length > 200) throw invalidArgument("orderBy is at most 200 characters");
  return text.split(",").map((part) => {
    const [name, direction, ...rest] = part.trim().split(/\s+/);
    if (!name || !(ORDER_KEYS as readonly string[]).includes(name) || rest.length > 0 || (direction !== undefined && !/^(asc|desc)$/i.test(direction))) {
      throw invalidArgument(`orderBy: expected fields of ${ORDER_KEYS.join(", ")}, each optionally ASC or DESC, comma-separated, not ${quote(part.trim())}`);
    }
    return { key: name === "name" ? "displayName" : (name as OrderKey["key"]), descending: direction?.toUpperCase() === "DESC" };
  });
}

/** Sorts by the keys in turn, then by identifier, so the order (and so the pages) is total. */
export function sortListed(items: ListedEntry[], keys: readonly OrderKey[]): ListedEntry[] {
  const valueOf = (item: ListedEntry, key: OrderKey["key"]): string | number =>
    key === "displayName" ? item.entry.displayName.toLowerCase() : key === "identifier" ? item.entry.identifier : Date.parse(key === "createdAt" ? item.createdAt : (item.entry.updatedAt ?? item.createdAt));
  return items.sort((a, b) => {
    for (const { key, descending } of keys) {
      const x = valueOf(a, key);
      const y = valueOf(b, key);
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      if (c !== 0) return descending ? -c : c;
    }
    return a.entry.identifier.localeCompare(b.entry.identifier);
  });
}
