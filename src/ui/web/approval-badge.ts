/**
 * How the page marks a spec that is not routed (docs/trust.md): held by the approval gate, or
 * withheld by trust (its signatures no longer verify under its tenant's `require`); and a
 * deprecated agent type, which still is. A badge wherever the agent type is listed or shown,
 * and the note that says it is not routed and what would change that. The page itself cannot
 * decide (its server has no operator rights, docs/ui.md): it shows the operator the command to
 * run with their own credentials.
 */
import { absTime, h } from "./dom.js";

/** The badge of a spec that is not routable: "pending approval", "rejected" or "withheld". */
export function approvalBadge(state: string): HTMLElement {
  const label = state === "pending" ? "pending approval" : state;
  const why = state === "withheld" ? "not routed: its signatures no longer verify under its tenant's require" : "not routed: the approval gate holds this spec";
  return h("span", { class: `badge a-${state.replace(/[^a-z]/g, "")}`, "data-approval": state, title: why }, label);
}

/** The badge of a deprecated agent type (still routed); `words` say by whom, why and what to use instead. */
export function deprecatedBadge(words: string): HTMLElement {
  return h("span", { class: "badge d-deprecated", "data-deprecated": "", title: `deprecated ${words} (still routed)` }, "deprecated");
}

/** The CLI command that approves the spec the operator sees, at the revision shown (a spec replaced since is refused). */
export function approveCommand(agentType: string, revision: number): string {
  return `agent-registry approve ${agentType} --revision ${revision} --by <you>`;
}

export function rejectCommand(agentType: string, revision: number): string {
  return `agent-registry reject ${agentType} --revision ${revision} --by <you> --reason '<why>'`;
}

/** A command as code that wraps only between its words (a browser would break `--revision` after its hyphens). */
export function commandCode(command: string): HTMLElement {
  return h("code", { class: "cmd" }, ...command.split(" ").flatMap((word, i) => [i > 0 ? " " : null, h("span", { class: "nw" }, word)]));
}

type Held = { agent_type: string; revision: number; instance_count: number; approval?: { state: string; by?: string; at?: string; reason?: string } };
type Lapse = { state: string; reason: string; kid: string | null; at: string };

/** The note of a spec withheld by trust: why, with which key, since when, and what restores it. */
export function withheldNote(a: { agent_type: string; instance_count: number; tenant_scope: string | null }, lapse: Lapse): HTMLElement {
  const instances = `${a.instance_count} instance${a.instance_count === 1 ? "" : "s"}`;
  return h(
    "div",
    { class: "notice n-withheld", id: "withheld-note", role: "note" },
    h("p", {}, h("strong", {}, "Withheld: its signatures no longer verify."), ` Reason ${lapse.reason}${lapse.kid ? `, key ${lapse.kid}` : ""}, since `, absTime(lapse.at), `. Its tenant (${a.tenant_scope ?? "shared agents"}) requires signatures, so no query routes to ${a.agent_type} (its ${instances} included) and nothing exports it.`),
    h("p", { class: "small" }, "It is routed again once the agent registers it signed by a key the tenant trusts, or the key comes back into the trust file."),
  );
}

/** The note an agent's page opens with when its spec is pending or rejected; null when it is routable. */
export function approvalNote(a: Held): HTMLElement | null {
  const state = a.approval?.state;
  if (state !== "pending" && state !== "rejected") return null;
  const instances = `${a.instance_count} instance${a.instance_count === 1 ? "" : "s"}`;
  const held =
    state === "pending"
      ? h("p", {}, h("strong", {}, "Waiting for an operator's approval."), ` No query routes to ${a.agent_type} (its ${instances} included), and its card and tool spec are not exported, until an operator approves this spec.`)
      : h("p", {}, h("strong", {}, `Rejected by ${a.approval?.by ?? "?"}`), " ", absTime(a.approval?.at ?? null), `: “${a.approval?.reason ?? ""}”. No query routes to ${a.agent_type} (its ${instances} included).`);
  return h(
    "div",
    { class: `notice n-${state}`, id: "approval-note", role: "note" },
    held,
    h("p", { class: "small" }, "Decide with the operator's credentials (the page cannot):"),
    h("p", { class: "small" }, commandCode(approveCommand(a.agent_type, a.revision)), state === "pending" ? h("br") : null, state === "pending" ? commandCode(rejectCommand(a.agent_type, a.revision)) : null),
  );
}
