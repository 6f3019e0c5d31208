/**
 * `lookup CAPABILITY`: who provides a capability, best first.
 */
import type { LookupRequest } from "../../client/types.js";
import { ExitCode, KIND_OPTION, READ_ONLY_OPTION, VERIFIED_ONLY_OPTION, kindFilter, statusFilter, str, type Command } from "../context.js";
import { deprecationNotes } from "../deprecation-notes.js";
import { renderTable, statusColor } from "../table.js";

export const lookupCommand: Command = {
  name: "lookup",
  summary: "providers of a capability, best first (ready ones by default)",
  usage: "lookup CAPABILITY [--status STATUS]... [--version RANGE] [--kind KIND] [--read-only] [--verified-only]",
  examples: [
    "agent-registry lookup text.summarize",
    "agent-registry lookup text.summarize --version '^1.2' --status ready --status draining",
    "agent-registry lookup read_file --kind mcp_server --read-only",
    "agent-registry lookup summarize --tenant acme --verified-only",
  ],
  options: {
    status: { type: "string", multiple: true, value: "STATUS", description: "provider statuses to include (default ready)" },
    version: { type: "string", value: "RANGE", description: "semver range the provider's version must satisfy" },
    kind: KIND_OPTION,
    "read-only": READ_ONLY_OPTION,
    "verified-only": VERIFIED_ONLY_OPTION,
  },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const req: LookupRequest = { capability: ctx.args[0] ?? "" };
    const status = statusFilter(ctx.values["status"]);
    if (status) req.status = status;
    const version = str(ctx.values["version"]);
    if (version) req.version = version;
    const kind = kindFilter(ctx.values["kind"]);
    if (kind) req.kind = kind;
    if (ctx.values["read-only"] === true) req.read_only = true;
    if (ctx.values["verified-only"] === true) req.verified_only = true;
    const reply = await (await ctx.client()).lookupAll(req);
    if (ctx.json) {
      ctx.printJson(reply);
      return ExitCode.Ok;
    }
    if (reply.providers.length === 0) {
      ctx.out(`no providers of ${reply.capability}`);
      return ExitCode.Ok;
    }
    const rows = reply.providers.map((p) => [
      p.agent_type,
      p.version,
      statusColor(ctx.colors, p.status),
      p.ready_instances,
      p.confidence_hint,
      p.nats_subject,
      p.consumer_group,
    ]);
    const table = renderTable(["AGENT TYPE", "VERSION", "STATUS", "READY", "CONFIDENCE", "SUBJECT", "GROUP"], rows, { colors: ctx.colors, right: [3, 4] });
    ctx.out(table + deprecationNotes(reply.providers, (p) => p.agent_type));
    return ExitCode.Ok;
  },
};
