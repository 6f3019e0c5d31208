/**
 * What one MCP tool is: a name that saved client configurations depend on, a description a
 * model chooses by, a zod input (checked here, so a bad argument is the registry's own
 * `invalid_request` with paths rather than a bare text), the JSON Schemas `tools/list`
 * shows, and a handler that asks the registry through the SDK client.
 */
import { z } from "zod";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "../protocol/errors.js";
import type { RegistryLink } from "./nats-link.js";
import { ToolError, toolErrorBody } from "./tool-error.js";
import { errorBodySchema } from "./tool-schemas.js";

export type ToolContext = {
  /** The registry through NATS, which may not be connected yet: `link.client()` refuses with `unavailable` until it is. */
  readonly link: RegistryLink;
  /** `tasks_delegate`'s timeout when the call gives none, and the most a call may ask for. */
  readonly delegateTimeoutMs: number;
  readonly maxDelegateTimeoutMs: number;
};

export type ToolAnnotations = NonNullable<Tool["annotations"]>;

export type ToolDefinition<I extends z.ZodType = z.ZodType> = {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  /** The success shape; the listed outputSchema admits the error body too (PROTOCOL.md section 13). */
  readonly output: z.ZodType;
  readonly annotations: ToolAnnotations;
  run(args: z.output<I>, ctx: ToolContext): Promise<object>;
};

export const defineTool = <I extends z.ZodType>(tool: ToolDefinition<I>): ToolDefinition => tool as unknown as ToolDefinition;

/** A JSON Schema for MCP: an object at the root, and no `$schema` (the protocol's default dialect applies). */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return { ...rest, type: "object" } as Tool["inputSchema"];
}

// Converting the zod schemas costs milliseconds, and stateless HTTP builds a server per request.
const listed = new WeakMap<ToolDefinition, Tool>();

/** The tool as `tools/list` shows it (built once per tool). */
export function listedTool(tool: ToolDefinition): Tool {
  let shown = listed.get(tool);
  if (shown === undefined) {
    shown = buildListing(tool);
    listed.set(tool, shown);
  }
  return shown;
}

function buildListing(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, "input"),
    outputSchema: jsonSchemaOf(z.union([tool.output, errorBodySchema]), "output"),
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/** A result carries its body twice: as structured content, and as JSON text for clients that read only text. */
const result = (body: object, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  structuredContent: body as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

/** Runs one call: arguments checked, the handler's answer or its failure as an error result. */
export async function callTool(tool: ToolDefinition, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
    const first = issues[0];
    const message = `invalid arguments for ${tool.name}${first ? `: ${first.path || "(arguments)"}: ${first.message}` : ""}`;
    return result(toolErrorBody(new ToolError(ErrorCode.InvalidRequest, message, issues)), true);
  }
  try {
    return result(await tool.run(parsed.data, ctx));
  } catch (e) {
    return result(toolErrorBody(e), true);
  }
}
