/**
 * The event feed: the last 200 stored events, then every new one as it is stored, newest on
 * top; filtered by type and agent type in the page. Scrolled away from the top, the feed holds
 * new events back (a count says how many) so the line being read does not move; back at the
 * top, or with "Show", they come in.
 */
import { STORED_EVENT_TYPES } from "../../protocol/events.js";
import { agentOf, openEvents, type Context, type FeedEvent } from "./api.js";
import { fill, h, tickTimes } from "./dom.js";
import { eventLine } from "./event-line.js";
import { setLive } from "./live.js";

const KEEP = 1000;

export function mountFeed(root: HTMLElement, ctx: Context, params: URLSearchParams): () => void {
  const all: FeedEvent[] = [];
  const held: FeedEvent[] = [];
  const type = h("select", { id: "e-type", onchange: () => redraw() }, h("option", { value: "" }, "any type"), ...STORED_EVENT_TYPES.map((t) => h("option", { value: t, selected: t === params.get("type") }, t.replace(/^registry\./, ""))));
  const agent = h("input", { id: "e-agent", type: "search", value: params.get("agent") ?? "", placeholder: "agent type", autocomplete: "off", oninput: () => redraw() });
  const list = h("ol", { id: "feed", class: "events feed", "aria-live": "off", tabindex: "0", "aria-label": "Events, newest first" });
  const showHeld = h("button", { type: "button", id: "feed-held", hidden: true, onclick: () => release() });
  const status = h("p", { class: "muted", role: "status" });
  fill(
    root,
    h("h2", {}, "Events"),
    h("form", { class: "filters", onsubmit: (e: Event) => e.preventDefault() }, h("label", { for: "e-type" }, "Type"), type, h("label", { for: "e-agent" }, "Agent type"), agent),
    status,
    showHeld,
    list,
  );

  const matches = (e: FeedEvent): boolean => {
    if (type.value && e.type !== type.value) return false;
    const a = agent.value.trim();
    if (!a) return true;
    const providers = e.data["providers"];
    return agentOf(e) === a || (Array.isArray(providers) && providers.includes(a));
  };

  function redraw(): void {
    const now = ctx.now();
    fill(list, ...all.filter(matches).map((e) => eventLine(e, now)));
    status.textContent = `${list.children.length} of the last ${all.length} events`;
  }

  function add(e: FeedEvent): void {
    all.unshift(e);
    if (all.length > KEEP) all.pop();
    if (matches(e)) list.prepend(eventLine(e, ctx.now()));
    while (list.children.length > KEEP) list.lastElementChild?.remove();
    status.textContent = `${list.children.length} of the last ${all.length} events`;
  }

  function release(): void {
    for (const e of held.splice(0).reverse()) add(e);
    showHeld.hidden = true;
  }

  const paused = (): boolean => list.scrollTop > 4 || window.scrollY > list.offsetTop;
  list.addEventListener("scroll", () => {
    if (!paused() && held.length > 0) release();
  });
  window.addEventListener("scroll", onScroll);
  function onScroll(): void {
    if (!paused() && held.length > 0) release();
  }

  const events = openEvents(
    { recent: "200" },
    (e) => {
      if (paused()) {
        held.unshift(e);
        if (held.length > KEEP) held.pop();
        showHeld.hidden = false;
        showHeld.textContent = `Paused while scrolled: show ${held.length} new events`;
        return;
      }
      add(e);
    },
    setLive,
  );
  const tick = setInterval(() => tickTimes(list, ctx.now()), 1000);
  return () => {
    events.close();
    clearInterval(tick);
    window.removeEventListener("scroll", onScroll);
  };
}
