/**
 * The chart strip's numbers as tables, one click away from the pictures: registrations and
 * deregistrations per minute, the counts at the last sample, and the totals rebuilt from the
 * events before the page opened.
 */
import { fill, h } from "./dom.js";
import type { LivePoint } from "./live-history.js";
import { INSTANCE_SERIES, TYPE_SERIES, type FleetSamples } from "./fleet-samples.js";
import type { MinuteSeries } from "./minute-buckets.js";
import { ratesTable } from "./rates-table.js";
import { absolute } from "./time-zone.js";

/** Fills `table`; `rebuilt` is asked only when there is a sample to rebuild back from. */
export function drawChartsTable(table: HTMLElement, r: MinuteSeries, samples: FleetSamples, rebuilt: () => LivePoint[]): void {
  const last = samples.at.length - 1;
  const rows = r.minutes
    .map((m, i) => ({ start: new Date(m * 1000).toISOString(), registered: r.registrations[i] ?? 0, deregistered: r.deregistrations[i] ?? 0, evicted: r.evictions[i] ?? 0 }))
    .filter((row) => row.registered + row.deregistered > 0);
  fill(
    table,
    ...ratesTable("rates-table", "Per minute, last hour (minutes with any)", "Minute", rows, "No registration or deregistration in the last hour."),
    last < 0
      ? null
      : h(
          "div",
          { id: "counts-table" },
          countsTable(`Live instances now (${absolute(new Date(samples.at[last]! * 1000).toISOString())})`, "instances", INSTANCE_SERIES, samples.instances, last),
          countsTable("Agent types now", "types", TYPE_SERIES, samples.types, last),
          rebuiltTable(rebuilt()),
        ),
  );
}

function rebuiltTable(points: LivePoint[]): HTMLElement {
  const rows = points.reverse();
  return h(
    "table",
    { id: "rebuilt-table" },
    h("caption", {}, "Before the page opened: live instances and agent types, rebuilt from the last hour's events"),
    h("thead", {}, h("tr", {}, ...["At", "Live instances", "ready", "registered", "draining", "Live agent types"].map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      ...rows.map((p) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, absolute(new Date(p.at).toISOString())),
          h("td", { "data-col": "instances" }, p.instances),
          ...(["ready", "registered", "draining"] as const).map((k) => h("td", { "data-col": k }, p.byStatus ? p.byStatus[k] : "?")),
          h("td", { "data-col": "types" }, p.types),
        ),
      ),
    ),
  );
}

function countsTable(caption: string, key: string, names: readonly string[], series: number[][], at: number): HTMLElement {
  return h(
    "table",
    {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...names.map((n) => h("th", { scope: "col" }, n)))),
    h("tbody", {}, h("tr", {}, ...names.map((n, i) => h("td", { "data-col": `${key}-${n}` }, series[i]![at]!)))),
  );
}
