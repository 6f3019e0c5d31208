/**
 * The instances table of the agent page: each instance's status, liveness and a countdown to
 * its eviction deadline (last heartbeat + missed_heartbeats x its interval), which ticks every
 * second without rebuilding the table.
 */
import type { AgentView, InstanceView } from "../../protocol/messages.js";
import type { Context, FeedEvent } from "./api.js";
import { absTime, badge, duration, fill, h, time } from "./dom.js";
import { livenessOf } from "../liveness.js";

function deadline(i: InstanceView, ctx: Context): number {
  return Date.parse(i.last_heartbeat) + ctx.info.missed_heartbeats * i.heartbeat_interval_ms;
}

function countdown(i: InstanceView, ctx: Context): string {
  if (i.instance_id === "static") return "never (static)";
  const left = deadline(i, ctx) - ctx.now();
  return left > 0 ? `in ${duration(left)}` : "overdue";
}

/** On time, late (missed one heartbeat) or critical (missed two), by the server's clock; static entries are always on time. */
function livenessCell(i: InstanceView, ctx: Context): HTMLElement {
  const l = i.instance_id === "static" ? "on_time" : livenessOf(ctx.now() - Date.parse(i.last_heartbeat), i.heartbeat_interval_ms);
  return h("span", { class: `badge l-${l}` }, l.replace("_", " "));
}

function instanceRow(i: InstanceView, ctx: Context, now: number): HTMLElement {
  return h(
    "tr",
    { "data-instance": i.instance_id },
    h("th", { scope: "row" }, i.instance_id),
    h("td", { "data-col": "status" }, badge(i.status)),
    h("td", { "data-col": "liveness" }, livenessCell(i, ctx)),
    h("td", {}, i.version),
    h("td", { "data-col": "tasks" }, i.active_tasks),
    h("td", {}, time(i.last_heartbeat, now)),
    h("td", { "data-col": "heard-at" }, absTime(i.last_heartbeat)),
    h("td", { "data-col": "deadline", "data-deadline": String(deadline(i, ctx)) }, countdown(i, ctx)),
  );
}

export function renderInstances(instances: HTMLElement, a: AgentView, ctx: Context): void {
  const now = ctx.now();
  fill(
    instances,
    h("h3", { id: "h-instances" }, `Instances (${a.instance_count})`),
    a.instances.length === 0
      ? h("p", { class: "muted" }, "No live instances.")
      : h(
          "div",
          { class: "scroll" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ...["Instance", "Status", "Liveness", "Version", "Active tasks", "Last heartbeat", "Heard at", "Evicted"].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...a.instances.map((i) => instanceRow(i, ctx, now))),
          ),
        ),
    a.instances_next_cursor ? h("p", { class: "muted" }, `The first ${a.instances.length} of ${a.instance_count} instances.`) : null,
  );
}

/** The per-second tick: only the countdown and liveness cells change, so open rows and selections stay. */
export function tickInstances(instances: HTMLElement, a: AgentView, ctx: Context): void {
  for (const i of a.instances) {
    const tr = instances.querySelector(`tr[data-instance="${CSS.escape(i.instance_id)}"]`);
    const cell = tr?.querySelector('td[data-col="deadline"]');
    if (cell) cell.textContent = countdown(i, ctx);
    tr?.querySelector('td[data-col="liveness"]')?.replaceChildren(livenessCell(i, ctx));
  }
}

/**
 * A heartbeat event for one of the listed instances moves its deadline (the registry stamped it
 * at about the event's time) and updates its status and tasks; true when it did.
 */
export function applyHeartbeat(a: AgentView, e: FeedEvent): boolean {
  const hb = a.instances.find((i) => e.type === "registry.agent.heartbeat" && i.instance_id === e.data["instance_id"]);
  if (!hb) return false;
  hb.last_heartbeat = e.time;
  if (typeof e.data["status"] === "string") hb.status = e.data["status"] as InstanceView["status"];
  if (typeof e.data["active_tasks"] === "number") hb.active_tasks = e.data["active_tasks"];
  return true;
}
