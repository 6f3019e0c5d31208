/**
 * Aligned plain-text tables and optional colour for the CLI. Colour follows the NO_COLOR
 * convention (https://no-color.org) and is off whenever stdout is not a terminal, so pipes
 * and files get clean text.
 */

export type Cell = string | number | boolean | null | undefined;

// eslint-disable-next-line no-control-regex
const ANSI_RE = /\u001b\[[0-9;]*m/g;

/** Visible width of a cell: colour escapes take no room on screen. */
export const visibleWidth = (s: string): number => [...s.replace(ANSI_RE, "")].length;

export function colorEnabled(isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean {
  const noColor = env["NO_COLOR"];
  return isTTY === true && (noColor === undefined || noColor === "");
}

const CODES = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 } as const;
export type Style = keyof typeof CODES;

export type Colors = { [K in Style]: (s: string) => string } & { enabled: boolean };

export function colors(enabled: boolean): Colors {
  const make = (code: number) => (s: string) => (enabled && s !== "" ? `\u001b[${code}m${s}\u001b[0m` : s);
  return {
    enabled,
    bold: make(CODES.bold),
    dim: make(CODES.dim),
    red: make(CODES.red),
    green: make(CODES.green),
    yellow: make(CODES.yellow),
    cyan: make(CODES.cyan),
  };
}

/** Colour of a status word wherever it appears (agent, instance, discover). */
export function statusColor(c: Colors, status: string): string {
  if (status === "ready") return c.green(status);
  if (status === "draining" || status === "busy" || status === "registered") return c.yellow(status);
  if (status === "deregistered" || status === "unavailable") return c.red(status);
  return status;
}

export const cellText = (v: Cell): string => (v === null || v === undefined ? "-" : String(v));

export type TableOptions = {
  colors?: Colors;
  /** Columns aligned to the right (numbers read better that way). */
  right?: readonly number[];
  /** Gap between columns. Default 2 spaces. */
  gap?: number;
};

/**
 * Renders rows under a header, every column as wide as its widest cell; trailing spaces are
 * trimmed so the output diffs cleanly. Returns the lines joined with "\n" (no final newline).
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[], options: TableOptions = {}): string {
  const c = options.colors ?? colors(false);
  const gap = " ".repeat(options.gap ?? 2);
  const right = new Set(options.right ?? []);
  const text = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const widths = headers.map((h, i) => Math.max(visibleWidth(h), ...text.map((r) => visibleWidth(r[i] ?? ""))));
  const pad = (s: string, i: number) => {
    const fill = " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(s)));
    return right.has(i) ? fill + s : s + fill;
  };
  const line = (cells: readonly string[]) => cells.map(pad).join(gap).trimEnd();
  return [c.bold(line(headers.map((h) => h))), ...text.map(line)].join("\n");
}

/** `key: value` lines with the keys aligned, for single records (`get`). */
export function renderFields(fields: readonly (readonly [string, Cell])[], options: { colors?: Colors } = {}): string {
  const c = options.colors ?? colors(false);
  const width = Math.max(0, ...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${c.dim(`${k}:`.padEnd(width + 1))} ${cellText(v)}`.trimEnd()).join("\n");
}
