/**
 * The approval gate's operator commands (v1.2, docs/trust.md "The approval gate"):
 * `approve TYPE`, `reject TYPE --reason TEXT` and `pending`. They need the operator role under
 * deploy/nats/auth.conf; any other user gets a permissions violation.
 */
import type { AgentView, ApprovalReply, PendingRequest } from "../../client/types.js";
import { ExitCode, UsageError, str, type Command, type CommandContext } from "../context.js";
import { renderTable } from "../table.js";

export const DECISION_OPTIONS = {
  by: { type: "string", value: "NAME", description: "who decides, recorded with the decision and in its event (default $USER)" },
  version: { type: "string", value: "VERSION", description: "the version you reviewed: refused if the stored spec is another" },
  revision: { type: "string", value: "N", description: "the spec's revision you reviewed (pending and get show it): refused if it changed since" },
} as const;

/** The decision's common fields from the command line; `by` falls back to the login name. */
export function decisionBody(ctx: CommandContext): { by: string; version?: string; revision?: number } {
  const by = str(ctx.values["by"]) ?? ctx.io.env["USER"];
  if (by === undefined || by === "") throw new UsageError("--by: name who decides (no $USER to default to)");
  const version = str(ctx.values["version"]);
  const rawRevision = str(ctx.values["revision"]);
  const revision = rawRevision === undefined ? undefined : Number(rawRevision);
  if (revision !== undefined && !(Number.isInteger(revision) && revision > 0)) throw new UsageError(`--revision: expected a positive integer, got "${rawRevision}"`);
  return { by, ...(version !== undefined ? { version } : {}), ...(revision !== undefined ? { revision } : {}) };
}

function printDecision(ctx: CommandContext, reply: ApprovalReply): ExitCode {
  if (ctx.json) {
    ctx.printJson(reply);
    return ExitCode.Ok;
  }
  const a = reply.approval;
  const where = reply.tenant_scope === null ? "shared" : `tenant ${reply.tenant_scope}`;
  const why = a.reason === undefined ? "" : `: ${a.reason}`;
  const routable = a.state === "approved" ? "routable now" : "not routable";
  ctx.out(`${reply.agent_type} ${reply.version} (${where}) ${a.state} by ${a.by ?? "?"}${why}; ${routable} (revision ${reply.revision})`);
  return ExitCode.Ok;
}

export const approveCommand: Command = {
  name: "approve",
  summary: "approve an agent type's pending (or rejected) spec, making it routable (operators, policy manual)",
  usage: "approve TYPE [--by NAME] [--version VERSION] [--revision N] [--reason TEXT]",
  examples: ["agent-registry approve acme-invoices --version 2.0.0 --by alice", "agent-registry approve acme-invoices --revision 42 --reason 'reviewed in CHG-1234'"],
  options: { ...DECISION_OPTIONS, reason: { type: "string", value: "TEXT", description: "why, recorded with the decision (optional)" } },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reason = str(ctx.values["reason"]);
    const client = await ctx.client();
    const reply = await client.approve(ctx.args[0] ?? "", { ...decisionBody(ctx), ...(reason !== undefined ? { reason } : {}) });
    return printDecision(ctx, reply);
  },
};

export const rejectCommand: Command = {
  name: "reject",
  summary: "reject an agent type's spec with a reason, keeping it (or taking it) out of routing (operators, policy manual)",
  usage: "reject TYPE --reason TEXT [--by NAME] [--version VERSION] [--revision N]",
  examples: ["agent-registry reject acme-invoices --reason 'sends invoices to an unvetted endpoint' --by alice"],
  options: { ...DECISION_OPTIONS, reason: { type: "string", value: "TEXT", description: "why (required), recorded with the decision and in its event" } },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reason = str(ctx.values["reason"]);
    if (reason === undefined || reason === "") throw new UsageError("--reason: a rejection says why");
    const client = await ctx.client();
    return printDecision(ctx, await client.reject(ctx.args[0] ?? "", { ...decisionBody(ctx), reason }));
  },
};

export const pendingCommand: Command = {
  name: "pending",
  summary: "list the specs waiting for an operator's approval (all pages), or the rejected ones, or those withheld by trust",
  usage: "pending [--tenant TENANT | --shared] [--rejected | --withheld]",
  examples: ["agent-registry pending", "agent-registry pending --tenant acme --json", "agent-registry pending --rejected", "agent-registry pending --withheld"],
  options: {
    shared: { type: "boolean", description: "only shared agents' specs (no tenant_scope); --tenant names one tenant's" },
    rejected: { type: "boolean", description: "the rejected specs instead of the pending ones" },
    withheld: { type: "boolean", description: "the specs withheld by trust (no longer verified under require: not routed) instead" },
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    if (ctx.values["shared"] === true && ctx.tenant !== undefined) throw new UsageError("--shared and --tenant: pick one");
    if (ctx.values["rejected"] === true && ctx.values["withheld"] === true) throw new UsageError("--rejected and --withheld: pick one");
    const state = ctx.values["rejected"] === true ? ("rejected" as const) : ctx.values["withheld"] === true ? ("withheld" as const) : undefined;
    const req: PendingRequest = {
      ...(ctx.values["shared"] === true ? { tenant: null } : ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
      ...(state !== undefined ? { state } : {}),
    };
    const client = await ctx.client();
    const agents: AgentView[] = [];
    let revision = 0;
    let cursor: string | null = null;
    do {
      const page = await client.pending({ ...req, ...(cursor !== null ? { cursor } : {}) }, revision > 0 ? { minRevision: revision } : {});
      agents.push(...page.agents);
      revision = page.revision;
      cursor = page.next_cursor;
    } while (cursor !== null);
    if (ctx.json) {
      ctx.printJson({ agents, revision });
      return ExitCode.Ok;
    }
    ctx.out(pendingTable(ctx, agents, req.state ?? "pending"));
    return ExitCode.Ok;
  },
};

const EMPTY = { pending: "no specs waiting for approval", rejected: "no rejected specs", withheld: "no specs withheld by trust" } as const;

function pendingTable(ctx: Pick<CommandContext, "colors">, agents: readonly AgentView[], state: keyof typeof EMPTY): string {
  if (agents.length === 0) return EMPTY[state];
  const rows = agents.map((a) => {
    const row = [a.agent_type, a.version, a.tenant_scope ?? "shared", String(a.instance_count), a.owner_team, a.trust.verified ? `yes (${a.trust.publisher})` : "no", String(a.revision)];
    if (state === "rejected") return [...row, `${a.approval?.by ?? "?"}: ${a.approval?.reason ?? ""}`];
    const lapse = a.trust.verified ? undefined : a.trust.lapse;
    return state === "withheld" ? [...row, `${lapse?.reason ?? "?"}${lapse?.kid ? ` (key ${lapse.kid})` : ""}`] : row;
  });
  const head = ["AGENT TYPE", "VERSION", "TENANT", "INSTANCES", "OWNER", "VERIFIED", "REVISION"];
  const extra = state === "rejected" ? ["REJECTED"] : state === "withheld" ? ["WITHHELD"] : [];
  return renderTable([...head, ...extra], rows, { colors: ctx.colors, right: [3, 6] });
}
