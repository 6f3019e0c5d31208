/**
 * `tasks_delegate` (PROTOCOL.md section 13), listed only when enabled: routes the capability as
 * `route` does, checks the payload against the chosen provider's input schema (the agent is
 * not called when it fails), sends the payload itself as the request body to the provider's
 * NATS subject, and returns the agent's reply. Every failure is a tool error a model can act on:
 * `no_route`, `invalid_payload` with paths, `timeout`, `agent_error`.
 */
import { z } from "zod";
import type { Msg } from "@nats-io/nats-core";
import { RegistryTimeoutError, RegistryUnreachableError, requestFailure } from "../client/errors.js";
import { ErrorCode, SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER } from "../protocol/errors.js";
import { defineTool, type ToolContext } from "./tool-definition.js";
import { DelegateErrorCode, ToolError } from "./tool-error.js";
import { delegateOutput } from "./tool-schemas.js";

/** Longest `timeout_ms` a call may ask for, whatever the configuration: MCP clients give up on calls long before. */
export const MAX_DELEGATE_TIMEOUT_MS = 600_000;

export type DelegateArgs = { capability: string; payload?: unknown; timeout_ms?: number | undefined };
export type Delegated = { agent_type: string; nats_subject: string; reply: unknown };

export async function delegateTask(args: DelegateArgs, ctx: ToolContext): Promise<Delegated> {
  const timeoutMs = args.timeout_ms ?? ctx.delegateTimeoutMs;
  if (timeoutMs > ctx.maxDelegateTimeoutMs) {
    throw new ToolError(ErrorCode.InvalidRequest, `timeout_ms is over this server's limit of ${ctx.maxDelegateTimeoutMs} ms`, [
      { path: "timeout_ms", message: `at most ${ctx.maxDelegateTimeoutMs}` },
    ]);
  }
  const routed = await ctx.client.route({ skill: args.capability });
  // The route reply names the agent; lookup gives its schema for this capability ($refs resolved).
  const { providers } = await ctx.client.lookupAll({ capability: args.capability });
  const provider = providers.find((p) => p.agent_type === routed.agent_type);
  if (!provider) {
    throw new ToolError(ErrorCode.NoRoute, `${routed.agent_type} stopped providing ${args.capability} while the task was routed; try again`);
  }
  const payload = args.payload ?? {};
  const issues = ctx.payloads.check(provider.input_schema, payload);
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new ToolError(
      DelegateErrorCode.InvalidPayload,
      `the payload does not match the input schema of ${args.capability} (${provider.agent_type}), so the agent was not called: ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`,
      issues,
    );
  }
  const body = new TextEncoder().encode(JSON.stringify(payload));
  const maxPayload = ctx.nc.info?.max_payload;
  if (maxPayload !== undefined && body.length > maxPayload) {
    throw new ToolError(ErrorCode.PayloadTooLarge, `the payload is ${body.length} bytes; NATS carries at most ${maxPayload} in one message`, [
      { path: "payload", message: `at most ${maxPayload} bytes as JSON` },
    ]);
  }
  const subject = routed.nats_subject;
  let msg: Msg;
  try {
    msg = await ctx.nc.request(subject, body, { timeout: timeoutMs });
  } catch (e) {
    const failure = requestFailure(e, subject, timeoutMs);
    if (failure instanceof RegistryTimeoutError) {
      throw new ToolError(DelegateErrorCode.Timeout, `${routed.agent_type} did not answer on ${subject} within ${timeoutMs} ms; the task may still be running`, [], { cause: e });
    }
    if (failure instanceof RegistryUnreachableError) {
      throw new ToolError(DelegateErrorCode.AgentError, `no instance of ${routed.agent_type} listens on ${subject} (${failure.message})`, [], { cause: e });
    }
    throw failure;
  }
  return { agent_type: routed.agent_type, nats_subject: subject, reply: agentReply(msg, routed.agent_type) };
}

/** The reply as JSON (or text); an error reply of an agent built on NATS services is `agent_error`. */
function agentReply(msg: Msg, agentType: string): unknown {
  const text = new TextDecoder().decode(msg.data);
  let reply: unknown = text;
  try {
    reply = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: the reply is the text itself
  }
  const code = msg.headers?.get(SERVICE_ERROR_CODE_HEADER);
  if (code) {
    const why = msg.headers?.get(SERVICE_ERROR_HEADER) || (typeof reply === "string" ? reply : JSON.stringify(reply));
    throw new ToolError(DelegateErrorCode.AgentError, `${agentType} answered with error ${code}: ${why}`);
  }
  return reply;
}

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
    payload: z.unknown().describe("the task: a JSON value matching the capability's input_schema, sent to the agent as is"),
    timeout_ms: z.number().int().min(1).max(MAX_DELEGATE_TIMEOUT_MS).describe("how long to wait for the answer, in milliseconds").optional(),
  }),
  output: delegateOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: (args, ctx) => delegateTask(args, ctx),
});
