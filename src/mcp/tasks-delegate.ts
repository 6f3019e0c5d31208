/**
 * `tasks_delegate` (PROTOCOL.md section 13), listed only when enabled: routes the capability as
 * `route` does, has the registry check the payload against the chosen provider's input schema
 * (the agent is not called when it fails), sends the payload itself as the request body to the
 * provider's NATS subject, and returns the agent's reply. Every failure is a tool error a model can act on:
 * `no_route`, `invalid_payload` with paths, `timeout`, `agent_error`.
 */
import { z } from "zod";
import { AgentReplyError, AgentRequestError, InvalidPayloadError } from "../client/call.js";
import { ErrorCode } from "../protocol/errors.js";
import { defineTool, type ToolContext } from "./tool-definition.js";
import { DelegateErrorCode, ToolError } from "./tool-error.js";
import { delegateOutput } from "./tool-schemas.js";

/** Longest `timeout_ms` a call may ask for, whatever the configuration: MCP clients give up on calls long before. */
export const MAX_DELEGATE_TIMEOUT_MS = 600_000;

export type DelegateArgs = { capability: string; payload?: unknown; timeout_ms?: number | undefined };
export type Delegated = { agent_type: string; nats_subject: string; reply: unknown };

/**
 * The SDK's `call` (route, the registry's `check`, the request), without the reply check the
 * section 13 tool does not make; its failures become the tool errors a model can act on.
 */
export async function delegateTask(args: DelegateArgs, ctx: ToolContext): Promise<Delegated> {
  const timeoutMs = args.timeout_ms ?? ctx.delegateTimeoutMs;
  if (timeoutMs > ctx.maxDelegateTimeoutMs) {
    throw new ToolError(ErrorCode.InvalidRequest, `timeout_ms is over this server's limit of ${ctx.maxDelegateTimeoutMs} ms`, [
      { path: "timeout_ms", message: `at most ${ctx.maxDelegateTimeoutMs}` },
    ]);
  }
  try {
    return await callWithPayload(args.capability, args.payload ?? {}, timeoutMs, ctx);
  } catch (e) {
    if (e instanceof InvalidPayloadError) {
      const first = e.issues[0];
      const where = first ? `: ${first.path}: ${first.message}${e.issues.length > 1 ? ` (and ${e.issues.length - 1} more)` : ""}` : "";
      throw new ToolError(DelegateErrorCode.InvalidPayload, `the payload does not match the input schema of ${args.capability} (${e.agentType}), so the agent was not called${where}`, e.issues);
    }
    if (e instanceof AgentRequestError) throw new ToolError(e.reason === "timeout" ? DelegateErrorCode.Timeout : DelegateErrorCode.AgentError, e.message, [], { cause: e });
    if (e instanceof AgentReplyError) throw new ToolError(DelegateErrorCode.AgentError, e.message);
    throw e;
  }
}

/**
 * Calls with the payload as sent; when that is a string the schema refused and the string is a
 * JSON object or array, with that value instead. Clients that render a form for the tool (the
 * MCP Inspector) send an object typed into a text box as its text. The agent is called once at
 * most: a refused payload never reaches it (the registry's check comes first).
 */
async function callWithPayload(capability: string, payload: unknown, timeoutMs: number, ctx: ToolContext): Promise<Delegated> {
  const client = await ctx.link.client();
  try {
    return await client.call(capability, payload, { timeoutMs, checkReply: false });
  } catch (e) {
    const parsed = e instanceof InvalidPayloadError && typeof payload === "string" ? jsonContainer(payload) : undefined;
    if (parsed === undefined) throw e;
    return await client.call(capability, parsed, { timeoutMs, checkReply: false });
  }
}

/** The object or array a string holds as JSON text, or undefined. */
function jsonContainer(text: string): object | undefined {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try {
    const value: unknown = JSON.parse(t);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON value of any kind, declared as such so that clients that build forms from the schema know what to send. */
const jsonValue = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string(), z.number(), z.boolean(), z.null()]);

export const tasksDelegateTool = defineTool({
  name: "tasks_delegate",
  title: "Delegate a task",
  description:
    "Hand a task to the best ready agent for a capability and wait for its answer. The agent is chosen as `route` chooses; the payload " +
    "is checked against that agent's input_schema for the capability first (read it with capability_lookup or capabilities_list), and " +
    "a payload that does not match fails with invalid_payload listing each problem's path, without calling the agent. " +
    "Returns the agent_type that did the work and its reply. Errors: no_route (nobody ready provides it), invalid_payload, " +
    "timeout (no answer within timeout_ms; the task may still run), agent_error (the agent failed or nobody listens).",
  input: z.strictObject({
    capability: z.string().min(1).max(256).describe("the capability to use, such as text.summarize"),
    payload: jsonValue.describe(
      "the task: a JSON value matching the capability's input_schema (usually an object), sent to the agent as is; an object or array sent as JSON text is taken as that value when the schema refuses the text",
    ).optional(),
    timeout_ms: z.number().int().min(1).max(MAX_DELEGATE_TIMEOUT_MS).describe("how long to wait for the answer, in milliseconds").optional(),
  }),
  output: delegateOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: (args, ctx) => delegateTask(args, ctx),
});
