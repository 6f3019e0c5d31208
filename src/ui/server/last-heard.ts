/**
 * When a deregistered agent type was last heard: its record keeps no instance, so `list` and
 * `get` say `last_heartbeat: null`, but the `registry.agent.deregistered` event of its last
 * removal carries the removed instance's `last_heartbeat` (an eviction's is the real last one).
 * Read with one direct get of the stream's last message on that agent type's subject; null
 * when the stream no longer holds one or cannot be read.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";

export async function lastHeard(nc: NatsConnection, prefix: string, stream: string, agentType: string, timeoutMs: number): Promise<string | null> {
  try {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    const m = await jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.agent.deregistered.${agentType}` });
    const at = m?.json<{ data?: { last_heartbeat?: unknown } }>().data?.last_heartbeat;
    return typeof at === "string" && Number.isFinite(Date.parse(at)) ? at : null;
  } catch {
    return null;
  }
}
