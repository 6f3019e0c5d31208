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
import { h } from "./dom.js";
import { LiveHistory, type ByStatus, type LivePoint } from "./live-history.js";
import { longRange } from "./long-range.js";
import { RATES_TITLE, rateLines } from "./rates-table.js";
import { MinuteBuckets } from "./minute-buckets.js";
import { absolute, currentZone } from "./time-zone.js";
import { FleetSamples, INSTANCE_SERIES, TYPE_SERIES, liveAt } from "./fleet-samples.js";
import { drawChartsTable } from "./charts-table.js";

/** A count holds until the next event changes it: a point a millisecond before each change draws the step. */
const steps = (points: LivePoint[]): LivePoint[] => points.flatMap((p, i) => (i === 0 ? [p] : [{ ...points[i - 1]!, at: p.at - 1 }, p]));
const HEIGHT = 160;
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

type Plots = { rates?: uPlot; instances?: uPlot; types?: uPlot };
type Boxes = { rates: HTMLElement; instances: HTMLElement; types: HTMLElement };

/**
 * The two sampled charts, live instances and agent types by status, created on first draw and
 * given new data after. Before the first sample they show the live totals rebuilt from the last
 * hour's events (live-history.ts); the statuses are sampled only while the page is open, so they
 * are gaps there.
 */
function drawStatusPlots(plots: Plots, boxes: Boxes, samples: FleetSamples, rebuiltPoints: LivePoint[], width: number): void {
  const rebuilt = steps(rebuiltPoints);
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

export function charts(): Charts {
  const buckets = new MinuteBuckets();
  const history = new LiveHistory();
  const samples = new FleetSamples();
  const seen = new Set<number>();
  const plots: Plots = {};
  let asTable = false;
  let range = "1h";

  const boxes: Boxes = { rates: h("div", { class: "chart", "data-chart": "rates" }), instances: h("div", { class: "chart", "data-chart": "instances" }), types: h("div", { class: "chart", "data-chart": "types" }) };
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

  function draw(): void {
    toggle.textContent = asTable ? "Show as charts" : "Show as a table";
    toggle.setAttribute("aria-pressed", String(asTable));
    const long = range !== "1h";
    pictures.hidden = asTable || long;
    table.hidden = !asTable || long;
    if (long) return void longer.show(range, asTable, chartWidth() * 2);
    longer.hide();
    const r = buckets.series(Date.now());
    if (asTable) return drawChartsTable(table, r, samples, () => samples.rebuiltBeforeOpen(history));
    const width = chartWidth();
    const rates: uPlot.AlignedData = [r.minutes, r.registrations, r.deregistrations, r.evictions];
    if (!plots.rates) {
      plots.rates = new uPlot(chartOptions(`${RATES_TITLE} per minute`, width, rateLines(colour)), rates, boxes.rates);
    } else plots.rates.setData(rates);
    if (samples.at.length === 0) return;
    drawStatusPlots(plots, boxes, samples, samples.rebuiltBeforeOpen(history), width);
  }

  function sample(s: FleetSummary): void {
    samples.add(s);
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
