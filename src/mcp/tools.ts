/**
 * The tools of PROTOCOL.md section 13, in the order `tools/list` shows them. Their names are a
 * contract: saved client configurations and prompts name them, so they never change.
 */
import { capabilitiesListTool } from "./capabilities-list.js";
import { agentCardTool, agentGetTool, agentsDiscoverTool, capabilityLookupTool, routeTool, searchTool } from "./query-tools.js";
import { registryHealthTool } from "./registry-health.js";
import { tasksDelegateTool } from "./tasks-delegate.js";
import type { ToolDefinition } from "./tool-definition.js";

export const QUERY_TOOLS: readonly ToolDefinition[] = [
  agentsDiscoverTool,
  capabilitiesListTool,
  capabilityLookupTool,
  agentGetTool,
  agentCardTool,
  routeTool,
  searchTool,
  registryHealthTool,
];

/** `tasks_delegate` sends work to agents, so it is listed only when the operator enables it. */
export function registryTools(options: { delegate: boolean }): readonly ToolDefinition[] {
  return options.delegate ? [...QUERY_TOOLS, tasksDelegateTool] : QUERY_TOOLS;
}
