/**
 * Where an instance stands against its heartbeats, for the page and its summary alike (server
 * and browser import this one rule, so the strip and the rows never disagree): on time while
 * less than one interval has passed since it was heard, late once it missed one heartbeat,
 * critical once it missed two. Eviction comes at REGISTRY_MISSED_HEARTBEATS intervals.
 */
import type { Liveness } from "./shared.js";

export function livenessOf(sinceHeardMs: number, intervalMs: number): Liveness {
  if (!(intervalMs > 0) || sinceHeardMs <= intervalMs) return "on_time";
  return sinceHeardMs <= 2 * intervalMs ? "late" : "critical";
}
