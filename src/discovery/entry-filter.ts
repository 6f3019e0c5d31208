/**
 * The `filter` of ARD's query model (ard-spec v0.9, section 7.1): keys are dot paths into a
 * catalog entry, values an array (a bare string counts as one); an entry matches when, for
 * every key (AND), the value at the path, or any element of it when it is an array, equals one
 * of the key's values (OR). `publisher` is read from the URN. A path this registry does not
 * fill is refused (the spec lets a registry answer 400), rather than matching nothing silently.
 */
import { invalidArgument } from "./ard-error.js";
import type { CatalogEntry } from "./catalog-entry.js";

export type EntryFilter = ReadonlyMap<string, ReadonlySet<string>>;

/** The paths a filter may name: the fields every entry of this registry can carry. */
export const FILTER_PATHS = [
  "identifier",
  "displayName",
  "type",
  "tags",
  "capabilities",
  "publisher",
  "version",
  "metadata.agent_type",
  "metadata.kind",
  "metadata.status",
  "metadata.tenant",
] as const;

const KNOWN_PATHS: ReadonlySet<string> = new Set(FILTER_PATHS);
const MAX_KEYS = FILTER_PATHS.length;
const MAX_VALUES = 100;
const MAX_VALUE_LENGTH = 512;

export function parseFilter(raw: unknown): EntryFilter {
  if (raw === undefined) return new Map();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidArgument("query.filter must be an object of field paths");
  const keys = Object.keys(raw);
  if (keys.length > MAX_KEYS) throw invalidArgument(`query.filter has ${keys.length} keys; at most ${MAX_KEYS}`);
  const filter = new Map<string, Set<string>>();
  for (const key of keys) {
    if (!KNOWN_PATHS.has(key)) throw invalidArgument(`query.filter path ${JSON.stringify(key.slice(0, 100))} is not supported; supported: ${FILTER_PATHS.join(", ")}`);
    const value = (raw as Record<string, unknown>)[key];
    const values = Array.isArray(value) ? value : [value];
    if (values.length === 0 || values.length > MAX_VALUES) throw invalidArgument(`query.filter.${key} must have 1 to ${MAX_VALUES} values`);
    for (const v of values) {
      if (typeof v !== "string" || v.length > MAX_VALUE_LENGTH) throw invalidArgument(`query.filter.${key} values must be strings of at most ${MAX_VALUE_LENGTH} characters`);
    }
    filter.set(key, new Set(values as string[]));
  }
  return filter;
}

/** The value at a path as strings (a number or boolean as its text, null as "null"), none when absent. */
export function valuesAt(entry: CatalogEntry, path: string): string[] {
  if (path === "publisher") return [entry.identifier.split(":")[2] ?? ""];
  let value: unknown = entry;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null) return [];
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => (typeof v === "string" ? v : String(v)));
}

export function matchesFilter(entry: CatalogEntry, filter: EntryFilter): boolean {
  for (const [path, wanted] of filter) {
    if (!valuesAt(entry, path).some((v) => wanted.has(v))) return false;
  }
  return true;
}
