/** One event as a line of a list: when, what, about whom, and the few fields that matter. */
import type { FeedEvent } from "./api.js";
import { h, time } from "./dom.js";

/** The fields worth a glance, per event type; the whole event is in the line's title. */
function detail(e: FeedEvent): string {
  const d = e.data;
  const v = (k: string): string => (d[k] === undefined || d[k] === null ? "" : String(d[k]));
  switch (e.type) {
    case "registry.agent.registered":
      return `${v("instance_id")} v${v("version")}${d["first_instance"] ? ", first instance" : ""}${d["spec_changed"] ? ", spec changed" : ""}`;
    case "registry.agent.deregistered":
      return `${v("instance_id")} ${v("reason")}${d["agent_removed"] ? ", agent type gone" : ""}`;
    case "registry.agent.status_changed":
      return `${v("instance_id")} ${v("from")} → ${v("to")}`;
    case "registry.capability.changed":
      return `${v("change")}, providers: ${Array.isArray(d["providers"]) ? (d["providers"] as unknown[]).join(", ") : ""}`;
    case "registry.agent.heartbeat":
      return `${v("instance_id")} ${v("status")}, ${v("active_tasks")} active tasks`;
    default:
      return JSON.stringify(d).slice(0, 200);
  }
}

export function eventLine(e: FeedEvent, now: number): HTMLElement {
  const short = e.type.replace(/^registry\./, "");
  return h(
    "li",
    { class: `ev ev-${short.replace(/[^a-z_]/g, "-")}`, "data-type": e.type, "data-subject": e.subject, "data-seq": e.seq ?? undefined, title: JSON.stringify(e) },
    time(e.time, now),
    " ",
    h("span", { class: "ev-type" }, short),
    " ",
    h("strong", {}, e.subject),
    " ",
    h("span", { class: "ev-detail" }, detail(e)),
  );
}
