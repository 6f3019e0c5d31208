/** The page's reads: JSON from /ui/api (the registry's own queries) and the /ui/events stream. */
import { EventType } from "../../protocol/events.js";
import type { UiInfo } from "../shared.js";
import { readEvents, type EventStream } from "./event-stream.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function getJson<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const qs = q.toString();
  const res = await fetch(`api/${path}${qs ? `?${qs}` : ""}`, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  if (!res.ok) throw new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`);
  return body as T;
}

/** A stored or heartbeat event as the stream delivers it. */
export type FeedEvent = { seq: number | null; type: string; time: string; subject: string; data: Record<string, unknown> };

/**
 * Opens /ui/events with `params`; calls `onEvent` for each event, of whatever type (event-stream.ts
 * explains why not EventSource), and `onState` when the connection opens or drops (it is made
 * again by itself, resuming after the last stored event seen).
 */
export function openEvents(params: Record<string, string>, onEvent: (e: FeedEvent) => void, onState?: (open: boolean) => void): EventStream {
  return readEvents(
    `events?${new URLSearchParams(params).toString()}`,
    (m) => {
      try {
        const e = JSON.parse(m.data) as Omit<FeedEvent, "seq">;
        if (typeof e !== "object" || e === null || typeof e.type !== "string") return;
        onEvent({ ...e, data: typeof e.data === "object" && e.data !== null ? e.data : {}, seq: m.id && m.type !== EventType.AgentHeartbeat ? Number(m.id) : null });
      } catch {
        // not an event of ours: ignored
      }
    },
    onState,
  );
}

/** The registry's settings the page needs, and the offset of the server's clock from ours. */
export type Context = { info: UiInfo; skewMs: number; now: () => number };

export async function loadContext(): Promise<Context> {
  const info = await getJson<UiInfo>("info");
  const skewMs = Date.parse(info.now) - Date.now();
  return { info, skewMs, now: () => Date.now() + skewMs };
}

/** The revision an event's data carries, if any: later reads ask for at least it. */
export function revisionOf(e: FeedEvent): number | undefined {
  const r = e.data["revision"];
  return typeof r === "number" ? r : undefined;
}

/** The agent type an event is about (capability events name several, in `providers`). */
export function agentOf(e: FeedEvent): string | undefined {
  const a = e.data["agent_type"];
  return typeof a === "string" ? a : undefined;
}
