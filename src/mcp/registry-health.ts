/**
 * `registry_health` (PROTOCOL.md section 13): whether the registry answers, and how many agent
 * types it holds (not deregistered) and how many of them have a ready instance, counted from
 * the pages of `discover`; and the state of this server's NATS connection, which may still be
 * coming up (the server starts without it: src/mcp/nats-link.ts). A registry that does not
 * answer, or NATS that cannot be reached, is a healthy-false answer, not a tool error: that is
 * what the tool is asked.
 */
import { z } from "zod";
import { packageVersion } from "../version.js";
import type { RegistryLink } from "./nats-link.js";
import { READ_ONLY } from "./query-tools.js";
import { defineTool } from "./tool-definition.js";
import { toolErrorBody } from "./tool-error.js";
import { healthOutput } from "./tool-schemas.js";

export type Health = {
  healthy: boolean;
  agents: number | null;
  ready_agents: number | null;
  revision: number | null;
  version: string;
  connected: boolean;
  nats_url: string;
  since: string;
  last_error: string | null;
  reason?: string;
};

export async function registryHealth(link: RegistryLink): Promise<Health> {
  let counts: Pick<Health, "agents" | "ready_agents" | "revision"> = { agents: null, ready_agents: null, revision: null };
  let reason: string | undefined;
  try {
    // Waits for the first connection attempt when it is still under way, so the link's state read after it is settled.
    const { agents, revision } = await (await link.client()).discoverAll({});
    counts = { agents: agents.length, ready_agents: agents.filter((a) => a.status !== "unavailable").length, revision };
  } catch (e) {
    const { error } = toolErrorBody(e);
    reason = `${error.code}: ${error.message}`;
  }
  const nats = link.status();
  return {
    healthy: reason === undefined,
    ...counts,
    version: packageVersion(),
    connected: nats.connected,
    nats_url: nats.url,
    since: nats.since.toISOString(),
    last_error: nats.lastError,
    ...(reason !== undefined ? { reason } : {}),
  };
}

export const registryHealthTool = defineTool({
  name: "registry_health",
  title: "Registry health",
  description:
    "Whether the agent registry answers, how many agent types it holds (not deregistered) and how many of them have a ready instance, " +
    "the store revision, and this server's version; and this server's NATS connection: connected, the NATS URL, since when it is in that state, " +
    "and the last connection error while it is down (the server keeps trying to connect). When healthy is false, `reason` says why " +
    "(NATS is not connected yet, the registry did not answer, or it refused).",
  input: z.strictObject({}),
  output: healthOutput,
  annotations: READ_ONLY,
  run: (_args, { link }) => registryHealth(link),
});
