/**
 * Registrations, deregistrations and evictions per period, as both chart ranges show them: the
 * last hour per minute (charts.ts) and the audit mirror's longer ranges per bucket
 * (long-range.ts). One series list for their charts, one table for their text alternative.
 */
import { h } from "./dom.js";
import { absolute } from "./time-zone.js";

export type RatesRow = { start: string; registered: number; deregistered: number; evicted: number };

export const RATES_TITLE = "Registrations, deregistrations, evictions";

/** The three series, coloured from the page's style sheet. */
export function rateLines(colour: (name: string) => string): Array<{ label: string; stroke: string }> {
  return [
    { label: "registrations", stroke: colour("--ok-fg") },
    { label: "deregistrations", stroke: colour("--info-fg") },
    { label: "evictions", stroke: colour("--bad-fg") },
  ];
}

/** The periods with any registration or deregistration, newest first; `empty` says so when there is none. */
export function ratesTable(id: string, caption: string, firstColumn: string, rows: readonly RatesRow[], empty: string): HTMLElement[] {
  const table = h(
    "table",
    { id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...[firstColumn, "Registrations", "Deregistrations", "Evictions"].map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      ...[...rows]
        .reverse()
        .map((r) => h("tr", {}, h("th", { scope: "row" }, absolute(r.start)), h("td", { "data-col": "registrations" }, r.registered), h("td", { "data-col": "deregistrations" }, r.deregistered), h("td", { "data-col": "evictions" }, r.evicted))),
    ),
  );
  return rows.length === 0 ? [table, h("p", { class: "muted" }, empty)] : [table];
}
