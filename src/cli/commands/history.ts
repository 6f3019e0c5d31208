/**
 * `history`: an agent type's stored events from the audit mirror's database (PROTOCOL.md
 * section 12), oldest first, one line each as `watch` prints them; paged until `--limit`.
 */
import { parseDuration, resolveEventTypes } from "../../client/events.js";
import type { HistoryEvent, HistoryRequest } from "../../client/types.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { ExitCode, UsageError, positiveInt, str, strs, type Command } from "../context.js";
import { formatEvent } from "./watch.js";

const DEFAULT_LIMIT = 100;
const PAGE = 1000;

/** A duration ago (90s, 15m, 1h, 7d) or an ISO time, as an ISO time. */
export function historyTime(flag: string, value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms !== undefined) return new Date(now - ms).toISOString();
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new UsageError(`--${flag}: expected a duration (90s, 15m, 1h, 7d) or an ISO time, got "${value}"`);
  return new Date(t).toISOString();
}

export const historyCommand: Command = {
  name: "history",
  summary: "print an agent type's stored events from the audit database (needs agent-registry audit running)",
  usage: "history AGENT_TYPE [--since WHEN] [--until WHEN] [--type TYPE]... [--limit N]",
  examples: ["agent-registry history code-reviewer --since 90d --type agent.deregistered", "agent-registry history summarizer --limit 1000 --json"],
  options: {
    since: { type: "string", value: "WHEN", description: "from a duration ago (90s, 15m, 1h, 7d) or an ISO time (inclusive)" },
    until: { type: "string", value: "WHEN", description: "up to a duration ago or an ISO time (exclusive)" },
    type: { type: "string", multiple: true, value: "TYPE", description: "agent.registered, agent.deregistered, agent.status_changed" },
    limit: { type: "string", value: "N", description: `print at most N events (default ${DEFAULT_LIMIT})` },
  },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const agentType = ctx.args[0]!;
    if (!AGENT_TYPE_RE.test(agentType)) throw new UsageError(`"${agentType}" is not an agent type (${AGENT_TYPE_RE.source})`);
    const limit = positiveInt("limit", ctx.values["limit"]) ?? DEFAULT_LIMIT;
    let types: string[] | undefined;
    try {
      const given = strs(ctx.values["type"]);
      types = given.length > 0 ? resolveEventTypes(given) : undefined;
    } catch (e) {
      throw new UsageError(`--type: ${(e as Error).message}`);
    }
    const req: HistoryRequest = { agent_type: agentType };
    const since = historyTime("since", str(ctx.values["since"]));
    const until = historyTime("until", str(ctx.values["until"]));
    if (since !== undefined) req.since = since;
    if (until !== undefined) req.until = until;
    if (types) req.types = types;
    const client = await ctx.client();
    const events: HistoryEvent[] = [];
    let cursor: string | undefined;
    let last;
    do {
      last = await client.history({ ...req, limit: Math.min(PAGE, limit - events.length), ...(cursor ? { cursor } : {}) });
      events.push(...last.events);
      cursor = last.next_cursor ?? undefined;
    } while (cursor !== undefined && events.length < limit);
    if (ctx.json) {
      ctx.printJson({ events, next_cursor: last.next_cursor, mirrored_seq: last.mirrored_seq, stream_last_seq: last.stream_last_seq });
      return ExitCode.Ok;
    }
    for (const e of events) ctx.out(formatEvent({ seq: e.seq, event: e as never }, ctx.colors));
    if (events.length === 0) ctx.out(ctx.colors.dim(`no stored events of ${agentType}`));
    if (last.next_cursor !== null) ctx.out(ctx.colors.dim(`(more: raise --limit above ${limit})`));
    if (last.mirrored_seq < last.stream_last_seq) ctx.out(ctx.colors.dim(`(the mirror is at #${last.mirrored_seq}, the stream at #${last.stream_last_seq}: newer events are not in the history yet)`));
    return ExitCode.Ok;
  },
};
