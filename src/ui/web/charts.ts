/**
 * The chart strip of the fleet view, drawn by uPlot: registrations, deregistrations and
 * evictions per minute over the last hour, counted from the events stream (the last hour
 * replayed with ?since=1h, then live); live instances and agent types by status, sampled from
 * each summary (summary-strip.ts) since the page opened, and their totals before it rebuilt
 * from the same events (live-history.ts). Longer ranges (long-range.ts) come
 * from the audit mirror; without one they show an empty, labelled state. Every chart's numbers
 * are a table one click away.
 */
import uPlot from "uplot";
import type { FleetSummary } from "../shared.js";
import { EventType } from "../../protocol/events.js";
import { openEvents } from "./api.js";
import { fill, h } from "./dom.js";
import { LiveHistory, type ByStatus, type LivePoint } from "./live-history.js";
import { longRange } from "./long-range.js";
import { RATES_TITLE, rateLines, ratesTable } from "./rates-table.js";
import { MinuteBuckets, type MinuteSeries } from "./minute-buckets.js";
import { absolute, currentZone } from "./time-zone.js";

const HOUR_MS = 3_600_000;
/** Live ones: ready, registered and draining (the first three series of each chart; late and critical are among them). */
const liveAt = (series: number[][], i: number): number => (series[0]![i] ?? 0) + (series[1]![i] ?? 0) + (series[2]![i] ?? 0);
/** A count holds until the next event changes it: a point a millisecond before each change draws the step. */
const steps = (points: LivePoint[]): LivePoint[] => points.flatMap((p, i) => (i === 0 ? [p] : [{ ...points[i - 1]!, at: p.at - 1 }, p]));
/** Samples kept: two hours at one every 2 s. */
const MAX_SAMPLES = 3600;
const HEIGHT = 160;
const INSTANCE_SERIES = ["ready", "registered", "draining", "late", "critical"] as const;
const TYPE_SERIES = ["ready", "registered", "draining", "deregistered"] as const;
const RANGES = [
  { value: "1h", label: "Last hour" },
  { value: "24h", label: "Last 24 hours" },
  { value: "7d", label: "Last 7 days" },
];

export type Charts = { el: HTMLElement; sample: (s: FleetSummary) => void; stop: () => void };

/** The page's colours (style.css), read when a chart is built: light or dark as the system is. */
function colour(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

/** A sampled chart spans at least this much, so its first minutes do not read in fractions of a second. */
const MIN_SPAN_S = 300;

function chartOptions(title: string, width: number, series: Array<{ label: string; stroke: string }>): uPlot.Options {
  const axis = { stroke: colour("--muted"), grid: { stroke: colour("--line"), width: 1 }, ticks: { stroke: colour("--line") } };
  return {
    title,
    width,
    height: HEIGHT,
    // The axis in the zone the header's toggle chose (time-zone.ts), read at each redraw.
    tzDate: (ts) => (currentZone() === "utc" ? uPlot.tzDate(new Date(ts * 1000), "Etc/UTC") : new Date(ts * 1000)),
    scales: { x: { time: true, range: (_u, min, max) => [Math.min(min, max - MIN_SPAN_S), max] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [axis, { ...axis, size: 40 }],
    series: [{ value: (_u, v) => (v === null ? "" : absolute(new Date(v * 1000).toISOString())) }, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, points: { show: false } }))],
    legend: { live: false },
    cursor: { show: false },
  };
}

export function charts(): Charts {
  const buckets = new MinuteBuckets();
  const history = new LiveHistory();
  const samples: { at: number[]; revisions: Array<number | null>; instances: number[][]; types: number[][] } = { at: [], revisions: [], instances: INSTANCE_SERIES.map(() => []), types: TYPE_SERIES.map(() => []) };
  const seen = new Set<number>();
  const plots: { rates?: uPlot; instances?: uPlot; types?: uPlot } = {};
  let asTable = false;
  let range = "1h";

  const boxes = { rates: h("div", { class: "chart", "data-chart": "rates" }), instances: h("div", { class: "chart", "data-chart": "instances" }), types: h("div", { class: "chart", "data-chart": "types" }) };
  const pictures = h("div", { class: "charts-row" }, boxes.rates, boxes.instances, boxes.types);
  const table = h("div", { class: "scroll charts-table", hidden: true });
  const longer = longRange(chartOptions, colour);
  const toggle = h("button", { type: "button", class: "charts-toggle", "aria-pressed": "false", onclick: () => ((asTable = !asTable), draw()) }, "Show as a table");
  const rangeSelect = h("select", { id: "c-range", onchange: () => void chooseRange(rangeSelect.value) }, ...RANGES.map((r) => h("option", { value: r.value }, r.label)));
  const el = h(
    "section",
    { id: "charts", "aria-labelledby": "h-charts" },
    h("h3", { id: "h-charts", class: "sr-only" }, "The fleet over time"),
    h("div", { class: "graph-bar" }, h("label", { for: "c-range" }, "Range"), rangeSelect, toggle),
    longer.el,
    pictures,
    table,
  );

  function chooseRange(value: string): void {
    range = value;
    draw();
  }

  /** Three abreast on a wide screen (12 px gaps, 10 px of border and padding each), one a row on a phone. */
  const chartWidth = (): number => Math.max(260, Math.floor(((el.clientWidth || 900) - 24) / 3) - 10);

  function rateSeries(): MinuteSeries {
    return buckets.series(Date.now());
  }

  function draw(): void {
    toggle.textContent = asTable ? "Show as charts" : "Show as a table";
    toggle.setAttribute("aria-pressed", String(asTable));
    const long = range !== "1h";
    pictures.hidden = asTable || long;
    table.hidden = !asTable || long;
    if (long) return void longer.show(range, asTable, chartWidth() * 2);
    longer.hide();
    const r = rateSeries();
    if (asTable) return drawTable(r);
    const width = chartWidth();
    const rates: uPlot.AlignedData = [r.minutes, r.registrations, r.deregistrations, r.evictions];
    if (!plots.rates) {
      plots.rates = new uPlot(chartOptions(`${RATES_TITLE} per minute`, width, rateLines(colour)), rates, boxes.rates);
    } else plots.rates.setData(rates);
    if (samples.at.length === 0) return;
    // Before the first sample, the live totals rebuilt from the last hour's events (live-history.ts);
    // the statuses are sampled only while the page is open, so they are gaps there.
    const rebuilt = steps(rebuiltBeforeOpen());
    const x = [...rebuilt.map((p) => p.at / 1000), ...samples.at];
    const gaps = rebuilt.map(() => null);
    // Ready, registered and draining are rebuilt too (byStatus); late and critical are not.
    const rebuiltStatus = (k: string) => rebuilt.map((p) => (p.byStatus && k in p.byStatus ? p.byStatus[k as keyof ByStatus] : null));
    const inst: uPlot.AlignedData = [x, ...samples.instances.map((s, i) => [...rebuiltStatus(INSTANCE_SERIES[i]!), ...s]), [...rebuilt.map((p) => p.instances), ...samples.at.map((_, i) => liveAt(samples.instances, i))]];
    const types: uPlot.AlignedData = [x, ...samples.types.map((s) => [...gaps, ...s]), [...rebuilt.map((p) => p.types), ...samples.at.map((_, i) => liveAt(samples.types, i))]];
    const tone: Record<string, string> = { ready: colour("--ok-fg"), registered: colour("--info-fg"), draining: colour("--muted"), late: colour("--warn-fg"), critical: colour("--bad-fg"), deregistered: colour("--bad-fg") };
    const all = { label: "all live", stroke: colour("--fg") };
    if (!plots.instances) plots.instances = new uPlot(chartOptions("Live instances by status", width, [...INSTANCE_SERIES.map((s) => ({ label: s, stroke: tone[s]! })), all]), inst, boxes.instances);
    else plots.instances.setData(inst);
    if (!plots.types) plots.types = new uPlot(chartOptions("Agent types by status", width, [...TYPE_SERIES.map((s) => ({ label: s, stroke: tone[s]! })), all]), types, boxes.types);
    else plots.types.setData(types);
  }

  /** Live instances and agent types from an hour before the first sample up to it, rebuilt from events. */
  function rebuiltBeforeOpen(): LivePoint[] {
    if (samples.at.length === 0) return [];
    const first = samples.at[0]! * 1000;
    const byStatus: ByStatus = { ready: samples.instances[0]![0] ?? 0, registered: samples.instances[1]![0] ?? 0, draining: samples.instances[2]![0] ?? 0 };
    return history.before({ at: first, revision: samples.revisions[0] ?? null }, { instances: liveAt(samples.instances, 0), types: liveAt(samples.types, 0), byStatus }, first - HOUR_MS);
  }

  function drawTable(r: MinuteSeries): void {
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
            rebuiltTable(),
          ),
    );
  }

  function rebuiltTable(): HTMLElement {
    const rows = rebuiltBeforeOpen().reverse();
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

  function sample(s: FleetSummary): void {
    samples.at.push(Date.parse(s.now) / 1000);
    samples.revisions.push(typeof s.revision === "number" ? s.revision : null);
    INSTANCE_SERIES.forEach((k, i) => samples.instances[i]!.push(k === "late" ? s.instances.late : k === "critical" ? s.instances.critical : (s.instances.by_status[k] ?? 0)));
    TYPE_SERIES.forEach((k, i) => samples.types[i]!.push(s.agent_types[k] ?? 0));
    if (samples.at.length > MAX_SAMPLES) {
      samples.at.shift();
      samples.revisions.shift();
      for (const a of [...samples.instances, ...samples.types]) a.shift();
    }
    draw();
  }

  // The last hour replayed, then each new one; deduplicated by stream sequence across reconnects.
  const events = openEvents({ since: "1h", types: [EventType.AgentRegistered, EventType.AgentDeregistered, EventType.AgentStatusChanged].join(",") }, (e) => {
    if (e.seq !== null) {
      if (seen.has(e.seq)) return;
      seen.add(e.seq);
      if (seen.size > 100_000) seen.clear();
    }
    buckets.add(e);
    history.add(e);
    drawSoon();
  });
  // A replay of thousands of events draws once, not once each.
  let pending = false;
  function drawSoon(): void {
    if (pending) return;
    pending = true;
    setTimeout(() => ((pending = false), draw()), 250);
  }
  const minuteTimer = setInterval(draw, 30_000); // the hour moves on even with no events
  return {
    el,
    sample,
    stop: () => {
      events.close();
      clearInterval(minuteTimer);
      for (const p of Object.values(plots)) p?.destroy();
      longer.stop();
    },
  };
}
