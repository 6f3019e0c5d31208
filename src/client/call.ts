/**
 * `RegistryClient.call`: a coordinator's task sent the checked way (PROTOCOL.md section 11.4).
 * The agent is chosen as `route` chooses (or named); the payload is checked by the registry
 * against that agent's input schema, and a payload that breaks it never leaves (InvalidPayloadError
 * with every problem's path); the reply is checked against the output schema the same way. The
 * checks are the registry's `check` op, so the SDK carries no schema engine of its own and
 * every client, in any language, gets the same verdict.
 */
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER, type ErrorIssue } from "../protocol/errors.js";
import type { CheckReply, CheckRequest, PayloadDirection, RouteReply } from "../protocol/messages.js";
import { PayloadTooLargeError, RegistryTimeoutError, RegistryUnreachableError, requestFailure } from "./errors.js";

/** A payload (or a reply) that breaks the capability's schema; `issues` name each problem's path. */
export class InvalidPayloadError extends Error {
  constructor(
    message: string,
    readonly direction: PayloadDirection,
    readonly agentType: string,
    readonly issues: readonly ErrorIssue[],
    /** The agent's reply, for a reply that broke the output schema. */
    readonly reply?: unknown,
  ) {
    super(message);
    this.name = "InvalidPayloadError";
  }
}

/**
 * The agent's side of a call failed: it did not answer within the timeout (`timeout`; the task
 * may still run), or nothing listens on its subject (`unreachable`). Registry queries failing
 * are the client's usual errors; this one is about the agent.
 */
export class AgentRequestError extends Error {
  constructor(
    message: string,
    readonly reason: "timeout" | "unreachable",
    readonly agentType: string,
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AgentRequestError";
  }
}

/** The agent answered with a NATS services error (`Nats-Service-Error-Code`). */
export class AgentReplyError extends Error {
  constructor(
    message: string,
    readonly agentType: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "AgentReplyError";
  }
}

export type CallOptions = {
  /** The provider to use; default: the one `route` picks for the capability. */
  agentType?: string;
  /** How long to wait for the agent's answer (ms). Default 30,000. */
  timeoutMs?: number;
  /** Check the reply against the capability's output schema (default true). */
  checkReply?: boolean;
  /**
   * Route and check against the registry's view at this store revision or later, as any query's
   * `min_revision`: a coordinator that has just registered (or seen) an agent passes that
   * write's revision, so the call cannot miss it on a replica that has not applied it yet.
   */
  minRevision?: number;
};

export type CallResult = { agent_type: string; nats_subject: string; reply: unknown };

export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** What call needs of the client: the queries it makes. */
export type CallQueries = {
  route(req: { skill: string }, opts?: { minRevision?: number }): Promise<RouteReply>;
  get(agentType: string, opts?: { minRevision?: number }): Promise<{ agent: { nats_subject: string } }>;
  check(req: CheckRequest, opts?: { minRevision?: number }): Promise<CheckReply>;
};

export async function callCapability(queries: CallQueries, nc: NatsConnection, capability: string, payload: unknown, opts: CallOptions = {}): Promise<CallResult> {
  const at = opts.minRevision !== undefined ? { minRevision: opts.minRevision } : undefined;
  const target = opts.agentType !== undefined
    ? { agent_type: opts.agentType, nats_subject: (await queries.get(opts.agentType, at)).agent.nats_subject }
    : await queries.route({ skill: capability }, at);
  const input = await queries.check({ capability, agent_type: target.agent_type, payload }, at);
  if (!input.valid) throw invalid("input", capability, target.agent_type, input.errors);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const body = new TextEncoder().encode(JSON.stringify(payload));
  const maxPayload = nc.info?.max_payload;
  if (maxPayload !== undefined && body.length > maxPayload) {
    throw new PayloadTooLargeError(`the payload is ${body.length} bytes; NATS carries at most ${maxPayload} in one message`, {
      issues: [{ path: "payload", message: `at most ${maxPayload} bytes as JSON` }],
    });
  }
  const subject = target.nats_subject;
  let msg: Msg;
  try {
    msg = await nc.request(subject, body, { timeout: timeoutMs });
  } catch (e) {
    const failure = requestFailure(e, subject, timeoutMs);
    if (failure instanceof RegistryTimeoutError) {
      throw new AgentRequestError(`${target.agent_type} did not answer on ${subject} within ${timeoutMs} ms; the task may still be running`, "timeout", target.agent_type, subject, { cause: e });
    }
    // Its message names what failed: no responders, or a closed or draining connection.
    if (failure instanceof RegistryUnreachableError) {
      throw new AgentRequestError(`no instance of ${target.agent_type} listens on ${subject} (${failure.message})`, "unreachable", target.agent_type, subject, { cause: e });
    }
    throw failure;
  }
  const reply = replyOf(msg, target.agent_type);
  if (opts.checkReply !== false) {
    const output = await queries.check({ capability, agent_type: target.agent_type, direction: "output", payload: reply });
    if (!output.valid) throw invalid("output", capability, target.agent_type, output.errors, reply);
  }
  return { agent_type: target.agent_type, nats_subject: target.nats_subject, reply };
}

function invalid(direction: PayloadDirection, capability: string, agentType: string, issues: readonly ErrorIssue[], reply?: unknown): InvalidPayloadError {
  const first = issues[0];
  const what = direction === "input" ? "the payload does not match the input schema" : "the agent's reply does not match the output schema";
  const where = first ? `: ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}` : "";
  const sent = direction === "input" ? ", so it was not sent" : "";
  return new InvalidPayloadError(`${what} of ${capability} (${agentType})${sent}${where}`, direction, agentType, issues, reply);
}

/** The reply as JSON, or its text when it is not JSON; an error reply of a NATS service throws. */
function replyOf(msg: Msg, agentType: string): unknown {
  const text = new TextDecoder().decode(msg.data);
  const code = msg.headers?.get(SERVICE_ERROR_CODE_HEADER);
  if (code) throw new AgentReplyError(`${agentType} answered with error ${code}: ${msg.headers?.get(SERVICE_ERROR_HEADER) || text}`, agentType, code);
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
