/**
 * `registry_health` (PROTOCOL.md section 13): whether the registry answers, and how many agent
 * types it holds (not deregistered) and how many of them have a ready instance, counted from
 * the pages of `discover`. A registry that does not answer is a healthy-false answer, not a
 * tool error: that is what the tool is asked.
 */
import { z } from "zod";
import type { RegistryClient } from "../client/registry-client.js";
import { packageVersion } from "../version.js";
import { READ_ONLY } from "./query-tools.js";
import { defineTool } from "./tool-definition.js";
import { toolErrorBody } from "./tool-error.js";
import { healthOutput } from "./tool-schemas.js";

export type Health = { healthy: boolean; agents: number | null; ready_agents: number | null; revision: number | null; version: string; reason?: string };

export async function registryHealth(client: RegistryClient): Promise<Health> {
  try {
    const { agents, revision } = await client.discoverAll({});
    const ready = agents.filter((a) => a.status !== "unavailable").length;
    return { healthy: true, agents: agents.length, ready_agents: ready, revision, version: packageVersion() };
  } catch (e) {
    const { error } = toolErrorBody(e);
    return { healthy: false, agents: null, ready_agents: null, revision: null, version: packageVersion(), reason: `${error.code}: ${error.message}` };
  }
}

export const registryHealthTool = defineTool({
  name: "registry_health",
  title: "Registry health",
  description:
    "Whether the agent registry answers, how many agent types it holds (not deregistered) and how many of them have a ready instance, " +
    "the store revision, and this server's version. When healthy is false, `reason` says why (the registry did not answer, or refused).",
  input: z.strictObject({}),
  output: healthOutput,
  annotations: READ_ONLY,
  run: (_args, { client }) => registryHealth(client),
});
