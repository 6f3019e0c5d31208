/**
 * The charts' longer ranges (24 hours, 7 days): registrations, deregistrations and evictions
 * per bucket, counted by the audit mirror's PostgreSQL (`/ui/api/rates`, the `history_rates`
 * op), drawn by uPlot with the same table alternative as the last hour. Instances and agent
 * types by status are sampled while the page is open only, so they have no longer range; the
 * status line says so. Without a mirror, the status line says why there is no chart.
 */
import uPlot from "uplot";
import type { RatesReply } from "../shared.js";
import { getJson } from "./api.js";
import { RATES_TITLE, rateLines, ratesTable } from "./rates-table.js";
import { fill, h } from "./dom.js";
import { absolute } from "./time-zone.js";

type Available = Extract<RatesReply, { available: true }>;
export type ChartOptions = (title: string, width: number, series: Array<{ label: string; stroke: string }>) => uPlot.Options;

const LABEL: Record<string, string> = { "24h": "the last 24 hours", "7d": "the last 7 days" };
/** A longer range is asked for again after this long while it stays chosen. */
const REFRESH_MS = 60_000;

export function longRange(options: ChartOptions, colour: (name: string) => string) {
  const status = h("p", { class: "chart-empty", hidden: true, role: "status" });
  const box = h("div", { class: "chart", "data-chart": "long-rates", hidden: true });
  const table = h("div", { class: "scroll charts-table", hidden: true });
  const el = h("div", {}, status, box, table);
  let shown: Available | null = null;
  let plot: uPlot | undefined;
  /** The range asked for last, when, and how it was last drawn: the strip calls show() every 2 s. */
  let asked = "";
  let askedAt = 0;
  let drawn = "";

  function hide(): void {
    asked = "";
    el.hidden = true;
  }

  /** Shows `range`, asking the mirror again once a minute; redraws only when something changed. */
  async function show(range: string, asTable: boolean, width: number): Promise<void> {
    el.hidden = false;
    const fresh = asked === range && Date.now() - askedAt < REFRESH_MS;
    if (fresh) {
      if (shown && drawn !== `${asTable}/${width}`) draw(asTable, width);
      return;
    }
    const first = asked !== range;
    asked = range;
    askedAt = Date.now();
    if (first) {
      shown = null;
      drawn = "";
      status.hidden = false;
      box.hidden = table.hidden = true;
      fill(status, "Asking the audit mirror…");
    }
    const reply = await getJson<RatesReply>("rates", { range }).catch((e: Error): RatesReply => ({ available: false, reason: e.message }));
    if (asked !== range) return; // another range was chosen meanwhile
    if (!reply.available) {
      shown = null;
      box.hidden = table.hidden = true;
      fill(status, `No data for this range: ${reply.reason}. Longer ranges come from the audit mirror (agent-registry audit); the last hour comes from the events stream.`);
      return;
    }
    shown = reply;
    draw(asTable, width);
  }

  function draw(asTable: boolean, width: number): void {
    if (!shown) return;
    drawn = `${asTable}/${width}`;
    const minutes = shown.bucket_seconds / 60;
    const per = minutes >= 60 ? `${minutes / 60} hours` : `${minutes} minutes`;
    fill(status, `From the audit mirror: per ${per} over ${LABEL[shown.range] ?? shown.range}, to ${absolute(shown.until)}. Instances and agent types by status are charted only while the page is open (choose the last hour).`);
    box.hidden = asTable;
    table.hidden = !asTable;
    if (asTable) return drawTable(shown, per);
    // Every bucket of the range, zero where the mirror counted nothing, so the line says "none" rather than skipping.
    const start = Date.parse(shown.since) / 1000;
    const count = Math.round((Date.parse(shown.until) / 1000 - start) / shown.bucket_seconds);
    const at = Array.from({ length: count }, (_, i) => start + i * shown!.bucket_seconds);
    const byStart = new Map(shown.buckets.map((b) => [Date.parse(b.start) / 1000, b]));
    const data: uPlot.AlignedData = [at, at.map((t) => byStart.get(t)?.registered ?? 0), at.map((t) => byStart.get(t)?.deregistered ?? 0), at.map((t) => byStart.get(t)?.evicted ?? 0)];
    plot?.destroy();
    box.replaceChildren();
    plot = new uPlot(
      options(`${RATES_TITLE} per ${per}`, Math.max(260, width), rateLines(colour)),
      data,
      box,
    );
  }

  function drawTable(r: Available, per: string): void {
    fill(table, ...ratesTable("long-rates-table", `Per ${per}, ${LABEL[r.range] ?? r.range} (buckets with any)`, "From", r.buckets, "No registration or deregistration in this range."));
  }

  return { el, show, hide, stop: () => plot?.destroy() };
}
