/**
 * Pages of a reply list, bounded by a count and by bytes. A NATS reply cannot exceed the
 * server's max_payload (1 MB by default): an unpaged list of 150 agents' capabilities, or one
 * agent type with 8,000 instances, made a query answer `internal` (docs/reliability.md). Every
 * list a reply carries is cut here, item by item as it is rendered, and the cursor of the last
 * item taken lets the client ask for the rest.
 */
import { invalidRequest } from "../errors.js";

export type PageLimits = {
  /** Most items a page holds (the request's `limit`). */
  readonly limit: number;
  /** Most bytes of JSON the items may take together. */
  readonly maxBytes: number;
};

export type Page<T> = { items: T[]; next_cursor: string | null };

/**
 * Renders items of `source` in order into a page. `render` returns null for an item the query
 * filters out, and gets the bytes still free so an item can shrink to fit (an agent view
 * shortens its instance list). A page always holds its first item, so a client always makes
 * progress; the body limit on writes keeps any one item well under max_payload.
 * `next_cursor` is the key of the last item taken when an item the filter keeps is left, else
 * null: a full page renders the next item before it says there is more, so the filters of a
 * query (status, owner, kind, ...) never leave an empty last page behind a cursor.
 */
export function takePage<S, T>(
  source: Iterable<S>,
  keyOf: (s: S) => string,
  render: (s: S, bytesLeft: number) => T | null,
  limits: PageLimits,
  /** An item's bytes in the reply; an item rendered as JSON text already says it without a second serialization. */
  bytesOf: (item: T) => number = jsonBytes,
): Page<T> {
  const items: T[] = [];
  let bytes = 0;
  let lastKey: string | null = null;
  for (const s of source) {
    const item = render(s, limits.maxBytes - bytes);
    if (item === null) continue;
    if (items.length >= limits.limit) return { items, next_cursor: lastKey };
    // One byte more for the comma between items.
    const size = bytesOf(item) + 1;
    if (items.length > 0 && bytes + size > limits.maxBytes) return { items, next_cursor: lastKey };
    items.push(item);
    bytes += size;
    lastKey = keyOf(s);
  }
  return { items, next_cursor: null };
}

/** UTF-8 length of `value` as JSON, without building a buffer. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? "");
}

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else n += 3; // the rest of the BMP, and a lone surrogate (written as U+FFFD)
  }
  return n;
}

/** Position in `sorted` of the first key strictly greater than `after` (binary search). */
export function indexAfter(sorted: readonly string[], after: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Cursors are opaque to clients: the key of the last item a page holds (an agent_type, a
 * capability name, an instance id, all ASCII tokens), base64url-encoded.
 */
export function encodeCursor(key: string): string {
  return btoa(key).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A reply's `next_cursor`: the cursor of a page's next key, null after the last page. */
export function nextCursor(key: string | null): string | null {
  return key === null ? null : encodeCursor(key);
}

/** The key inside a cursor this registry issued; anything else is `invalid_request`. */
export function decodeCursor(cursor: string, keyRule: RegExp, path = "cursor"): string {
  let key: string | undefined;
  try {
    key = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    key = undefined;
  }
  if (key === undefined || !keyRule.test(key)) throw invalidRequest(`${path} is not one this registry issued`, [{ path, message: "invalid cursor" }]);
  return key;
}
