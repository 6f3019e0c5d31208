/** A plain-text table for the terminal: columns padded to their widest cell. */
export function textTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The same rows as a GitHub markdown table (pipes in cells escaped). */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cell = (c: string): string => c.replace(/\|/g, "\\|");
  return [`| ${header.map(cell).join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`)].join("\n");
}

export const verdict = (pass: boolean | null): string => (pass === null ? "-" : pass ? "PASS" : "MISS");
