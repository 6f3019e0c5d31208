/**
 * The agent page's history from the audit mirror; without a mirror it says why and points at
 * the recent events, which come from the events stream.
 */
import type { HistoryReply } from "../shared.js";
import { getJson, type Context, type FeedEvent } from "./api.js";
import { fill, h } from "./dom.js";
import { eventLine } from "./event-line.js";

export async function loadHistory(history: HTMLElement, agentType: string, ctx: Context): Promise<void> {
  const reply = await getJson<HistoryReply>(`agents/${encodeURIComponent(agentType)}/history`).catch((e: Error): HistoryReply => ({ available: false, reason: e.message }));
  if (!reply.available) {
    fill(history, h("h3", { id: "h-history" }, "History"), h("p", { class: "muted", id: "history-note" }, `${reply.reason}: the recent events above come from the events stream.`));
    return;
  }
  const now = ctx.now();
  fill(
    history,
    h("h3", { id: "h-history" }, "History (audit mirror)"),
    h("ol", { class: "events" }, ...reply.events.map((e) => eventLine(e as unknown as FeedEvent, now))),
    reply.next_cursor ? h("p", { class: "muted" }, "Older entries: `agent-registry` history from the audit mirror.") : null,
  );
}
