/**
 * `watch`: registry events, replayed from `--since` and then followed live, one line each.
 */
import { STORED_EVENT_TYPES, type DeprecationData, type TrustRootsChangedData } from "../../protocol/events.js";
import { resolveEventTypes, startPolicy, watchEvents, type WatchedEvent } from "../../client/events.js";
import { ExitCode, UsageError, str, strs, type Command } from "../context.js";
import { colors as makeColors, type Colors } from "../table.js";

const words = (state: string): string => state.replace(/_/g, " ");
/** The agent types a dependency resolves to, as the registry's dependency warnings name them. */
const providedBy = (providers: string[]): string => (providers.length > 0 ? ` (provided by ${providers.join(", ")})` : "");

/** One readable line: time, stream sequence, short type, subject, then what changed. */
export function formatEvent({ seq, event }: WatchedEvent, c: Colors = makeColors(false)): string {
  const type = event.type.replace(/^registry\./, "");
  let detail: string;
  let paint = (s: string) => s;
  switch (event.type) {
    case "registry.agent.registered": {
      const d = event.data;
      detail = `${d.version} instance ${d.instance_id}${d.first_instance ? " (first instance)" : ""}${d.spec_changed ? " (spec changed)" : ""}${d.replaced === true ? " (replaced)" : ""}`;
      paint = c.green;
      break;
    }
    case "registry.agent.deregistered": {
      const d = event.data;
      detail = `instance ${d.instance_id} ${d.reason}${d.agent_removed ? " (agent removed)" : ""}`;
      paint = c.red;
      break;
    }
    case "registry.agent.status_changed":
      detail = `instance ${event.data.instance_id} ${event.data.from} -> ${event.data.to}`;
      paint = c.yellow;
      break;
    case "registry.capability.changed":
      detail = `${event.data.change}, providers: ${event.data.providers.join(",") || "none"}`;
      paint = c.cyan;
      break;
    case "registry.agent.dependency_lost":
      detail = `lost ${event.data.node}: ${words(event.data.state)}${providedBy(event.data.providers)}`;
      paint = c.red;
      break;
    case "registry.agent.dependency_restored":
      detail = `${event.data.node} is ${words(event.data.state)} again${providedBy(event.data.providers)}`;
      paint = c.green;
      break;
    case "registry.agent.pending":
      detail = `${event.data.version} waits for an operator's approval`;
      paint = c.yellow;
      break;
    case "registry.agent.approved":
    case "registry.agent.rejected": {
      const d = event.data;
      detail = `${d.version} ${d.state}${d.by === null ? "" : ` by ${d.by}`}${d.reason === null ? "" : `: ${d.reason}`}`;
      paint = d.state === "approved" ? c.green : c.red;
      break;
    }
    case "registry.agent.trust_changed": {
      const d = event.data;
      detail = `${d.version} ${d.previous_state} -> ${d.state} (${d.reason}${d.kid === null ? "" : `, key ${d.kid}`})`;
      paint = d.state === "verified" ? c.green : d.state === "withheld" ? c.red : c.yellow;
      break;
    }
    case "registry.trust.roots_changed":
      ({ detail, paint } = rootsChangedLine(event.data, c));
      break;
    case "registry.agent.deprecated":
    case "registry.agent.undeprecated":
      ({ detail, paint } = deprecationLine(event.data, c));
      break;
    case "registry.agent.heartbeat":
      detail = `instance ${event.data.instance_id} ${event.data.status} tasks ${event.data.active_tasks}`;
      break;
    case "registry.alert.self_preservation": {
      const d = event.data;
      detail = `${d.active ? "evictions paused" : "evictions resumed"}: ${d.overdue} of ${d.live} live instances overdue (share ${d.ratio}, threshold ${d.threshold})`;
      paint = c.yellow;
      break;
    }
    case "registry.alert.audit_gap": {
      const d = event.data;
      detail = `${d.missing} events of ${d.stream} never mirrored (#${d.first_seq} to #${d.last_seq})`;
      paint = c.yellow;
      break;
    }
    default: {
      // Every type of the protocol has its case (this does not compile otherwise); a stream
      // shared with other publishers may still hold others.
      const other: { data?: unknown } = event satisfies never;
      detail = JSON.stringify(other.data ?? {});
    }
  }
  return `${c.dim(event.time)}  ${c.dim(`#${seq}`)}  ${paint(type.padEnd(20))}  ${c.bold(event.subject)}  ${detail}`;
}

type Line = { detail: string; paint: (s: string) => string };

/** v1.2: a tenant's trust roots set or deleted in the bucket. */
function rootsChangedLine(d: TrustRootsChangedData, c: Colors): Line {
  const what = d.change === "deleted" ? `trust roots deleted from the bucket` : `trust roots set: mode ${d.mode}, approval ${d.approval}, keys ${d.kids.join(",") || "none"}`;
  return { detail: what + (d.by === null ? "" : ` by ${d.by}`), paint: c.cyan };
}

/** v1.2: an operator's deprecation of an agent type, or its withdrawal. */
function deprecationLine(d: DeprecationData, c: Colors): Line {
  const detail = `${d.version} ${d.deprecated ? "deprecated" : "no longer deprecated"} by ${d.by}${d.reason === null ? "" : `: ${d.reason}`}${d.successor === null ? "" : `; use ${d.successor}`}`;
  return { detail, paint: d.deprecated ? c.yellow : c.green };
}

export const watchCommand: Command = {
  name: "watch",
  summary: "print registry events as they happen, optionally replaying history first",
  usage: "watch [--since DURATION|TIME|SEQ] [--type TYPE]... [--agent TYPE] [--stream NAME]",
  examples: ["agent-registry watch --since 1h --type agent.deregistered", "agent-registry watch --agent summarizer --json"],
  options: {
    since: { type: "string", value: "WHEN", description: "replay from a duration ago (90s, 15m, 1h, 7d), an ISO time or a stream sequence" },
    type: {
      type: "string",
      multiple: true,
      value: "TYPE",
      description: STORED_EVENT_TYPES.map((t) => t.replace(/^registry\./, "")).join(", "),
    },
    agent: { type: "string", value: "TYPE", description: "only the events of this agent type" },
    stream: { type: "string", value: "NAME", description: "events stream (env REGISTRY_EVENTS_STREAM, default REGISTRY_EVENTS)" },
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    const since = str(ctx.values["since"]);
    const types = strs(ctx.values["type"]);
    // Bad flags are usage errors, found before connecting.
    try {
      startPolicy(since);
      resolveEventTypes(types);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    // Ctrl-C (or SIGTERM) ends the loop, which deletes the consumer before main closes the connection.
    const stop = new AbortController();
    void ctx.io.interrupted().then(() => stop.abort());
    const nc = await ctx.nc();
    const events = watchEvents(nc, {
      since,
      types,
      agentType: str(ctx.values["agent"]),
      stream: str(ctx.values["stream"]) ?? ctx.io.env["REGISTRY_EVENTS_STREAM"] ?? "REGISTRY_EVENTS",
      prefix: ctx.prefix,
      timeoutMs: ctx.timeoutMs,
      signal: stop.signal,
    });
    for await (const e of events) ctx.out(ctx.json ? JSON.stringify(e) : formatEvent(e, ctx.colors));
    return ExitCode.Ok;
  },
};
