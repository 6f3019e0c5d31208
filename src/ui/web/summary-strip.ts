/**
 * The strip at the top of the fleet view: live instances by status with the late (amber) and
 * critical (red) ones counted apart, agent types by status, whether self-preservation has
 * paused eviction, how many specs wait for an operator's approval (amber, a link to them), which replica evicts, the registry replicas and the NATS server's version.
 * Read from /ui/api/summary every EVERY_MS and after stored events (at most one read in flight).
 */
import type { FleetSummary } from "../shared.js";
import { getJson } from "./api.js";
import { absTime, fill, h } from "./dom.js";
import { coalesced } from "./refresh.js";

const EVERY_MS = 2000;
const INSTANCE_STATES = ["ready", "registered", "draining"];

export type SummaryStrip = { el: HTMLElement; refresh: () => void; stop: () => void };

/** `onSummary` gets each summary read (the charts sample them). */
export function summaryStrip(onSummary?: (s: FleetSummary) => void): SummaryStrip {
  const el = h("section", { id: "summary", class: "strip", "aria-label": "Fleet summary" }, h("p", { class: "muted" }, "Counting the fleet…"));

  const tile = (id: string, label: string, value: Node | string, cls = ""): HTMLElement =>
    h("div", { class: `tile ${cls}`, "data-tile": id }, h("div", { class: "tile-label" }, label), h("div", { class: "tile-value" }, value));

  function render(s: FleetSummary): void {
    const by = s.instances.by_status;
    const sp = s.self_preservation;
    const types = Object.entries(s.agent_types).sort(([a], [b]) => a.localeCompare(b));
    fill(
      el,
      tile("instances", "Live instances", h("span", {}, h("strong", {}, String(s.instances.total)), " ", h("span", { class: "small" }, INSTANCE_STATES.map((k) => `${by[k] ?? 0} ${k}`).join(" · ")))),
      tile("late", `Late (missed 1 heartbeat)`, String(s.instances.late), s.instances.late > 0 ? "t-late" : ""),
      tile("critical", `Critical (missed 2)`, String(s.instances.critical), s.instances.critical > 0 ? "t-critical" : ""),
      tile("types", "Agent types", types.length === 0 ? "none" : types.map(([k, n]) => `${n} ${k}`).join(" · ")),
      tile(
        "eviction",
        "Eviction",
        sp === null ? "unknown (events stream unreadable)" : sp.active ? h("span", {}, "paused by self-preservation since ", absTime(sp.since), ` (${sp.overdue} of ${sp.live} overdue)`) : "running",
        sp?.active ? "t-critical" : "",
      ),
      tile(
        "approvals",
        "Waiting for approval",
        h("a", { href: "#/approvals" }, String(s.approvals.pending)),
        s.approvals.pending > 0 ? "t-late" : "",
      ),
      s.approvals.rejected > 0 ? tile("rejected", "Rejected specs", h("a", { href: "#/approvals?state=rejected" }, String(s.approvals.rejected))) : null,
      // Shown only when trust withholds something, red: those specs are not routed.
      s.approvals.withheld > 0 ? tile("withheld", "Withheld by trust", h("a", { href: "#/approvals?state=withheld" }, String(s.approvals.withheld)), "t-critical") : null,
      tile("evictor", "Evictor lease", s.evictor ?? "no holder"),
      tile("replicas", "Registry replicas", s.replicas === null ? "unknown" : h("span", { title: s.replicas.map((r) => `${r.id} ${r.version}`).join("\n") }, `${s.replicas.length} (${[...new Set(s.replicas.map((r) => r.version))].join(", ")})`)),
      tile("nats", "NATS server", s.nats_server ?? "unknown"),
    );
  }

  const refresh = coalesced(async () => {
    try {
      const s = await getJson<FleetSummary>("summary");
      render(s);
      onSummary?.(s);
    } catch (e) {
      fill(el, h("p", { class: "error" }, `Could not read the fleet summary: ${(e as Error).message}`));
    }
  });
  const timer = setInterval(refresh, EVERY_MS);
  refresh();
  return { el, refresh, stop: () => clearInterval(timer) };
}
