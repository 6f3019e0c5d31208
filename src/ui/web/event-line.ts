/** One event as a line of a list: when, what, about whom, and the few fields that matter (event-text.ts); every field, in words, is in the line's title. */
import type { FeedEvent } from "./api.js";
import { h, time } from "./dom.js";
import { eventDetail, fieldWords } from "./event-text.js";

export function eventLine(e: FeedEvent, now: number): HTMLElement {
  const short = e.type.replace(/^registry\./, "");
  return h(
    "li",
    { class: `ev ev-${short.replace(/[^a-z_]/g, "-")}`, "data-type": e.type, "data-subject": e.subject, "data-seq": e.seq ?? undefined, title: `${e.type} ${e.subject}: ${fieldWords(e.data, 40)}` },
    time(e.time, now),
    " ",
    h("span", { class: "ev-type" }, short),
    " ",
    h("strong", {}, e.subject),
    " ",
    h("span", { class: "ev-detail" }, eventDetail(e)),
  );
}
