/**
 * The scaffold of every NATS micro service the project runs: the registry's API
 * (adapters/nats/endpoints.ts) and the audit mirror's `history` (audit/history-endpoint.ts).
 * One place turns a request into an answer: refuse before reading (an `admit` hook: rate
 * limits), parse the body under limits (request-body.ts), run the handler, and answer a
 * RegistryError with the error headers and body of PROTOCOL.md section 1, anything else as
 * `internal` with a correlation id the log repeats.
 *
 * Handlers may be async, and @nats-io/services only catches synchronous throws, so nothing
 * here throws or rejects: a failing handler cannot take the process down.
 */
import { randomUUID } from "node:crypto";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { Svcm, type Service, type ServiceMsg } from "@nats-io/services";
import { ErrorCode, RateLimitedError, RegistryError, ShedError } from "../domain/errors.js";
import { SERVICE_NAME, SERVICE_QUEUE } from "../protocol/subjects.js";
import type { Logger } from "./logger.js";
import { parseRequestBody, type BodyLimits } from "./request-body.js";
import { utf8 } from "./utf8.js";

export const CORRELATION_HEADER = "Registry-Correlation-Id";

type HandlerResult = object | Uint8Array | Promise<object | Uint8Array>;
/**
 * A reply, or a promise of one. `tokens` are the subject's tokens after the prefix. A reply
 * given synchronously is sent in the message's own callback, with no promise allocated for it
 * (a heartbeat answered from memory: tens of thousands a second).
 */
export type EndpointHandler = (tokens: string[], body: Record<string, unknown>, data: Uint8Array) => HandlerResult;
/**
 * Answers from a cache without parsing, or undefined to take the full path. It gets the
 * message rather than the subject's tokens: a plain lookup needs no subject, and decoding and
 * splitting it was 6 % of what a cached lookup allocated.
 */
export type FastPath = (msg: ServiceMsg) => Uint8Array | undefined;

export type EndpointHooks = {
  log: Logger;
  limits: BodyLimits;
  /** Before anything reads the body, so that refusing a flood costs next to nothing: throws to refuse. */
  admit?: (endpoint: string, tokens: string[]) => void;
  /** Whether a reply is still worth sending (a heartbeat's behind a write backlog is not); the default sends. */
  keepReply?: (endpoint: string) => boolean;
  /** Called once per request with its endpoint, outcome (ok, an error code, rate_limited, shed or reply_dropped) and duration. */
  observe?: (endpoint: string, outcome: string, seconds: number) => void;
  /** Logs a refusal other than `internal` (which is always logged at error level); the default logs at debug. */
  logRefusal?: (endpoint: string, subject: string, error: RegistryError, correlationId: string) => void;
};

export type ServiceInfo = { version: string; description: string; metadata: Record<string, string> };

export type ServiceEndpoints = {
  readonly service: Service;
  /** Serves `subject` as endpoint `name`. */
  add(name: string, subject: string, handler: EndpointHandler, fast?: FastPath): void;
};

/** The project's NATS service (`agent-registry`, queue group `agent-registry`, PROTOCOL.md section 1), under `prefix`. */
export async function startServiceEndpoints(nc: NatsConnection, prefix: string, info: ServiceInfo, hooks: EndpointHooks): Promise<ServiceEndpoints> {
  const depth = prefix.split(".").length;
  const service = await new Svcm(nc).add({ name: SERVICE_NAME, queue: SERVICE_QUEUE, ...info });
  const add = (name: string, subject: string, handler: EndpointHandler, fast?: FastPath): void => {
    service.addEndpoint(name, {
      subject,
      handler: (err, msg) => {
        if (err) {
          hooks.log.error({ err, endpoint: name }, "endpoint subscription failed");
          return;
        }
        if (fast) {
          // Synchronous: a repeated lookup is answered without a promise, a parse or zod.
          const started = performance.now();
          const reply = fast(msg);
          if (reply !== undefined) {
            if (msg.reply) msg.respond(reply);
            hooks.observe?.(name, "ok", (performance.now() - started) / 1000);
            return;
          }
        }
        handle(hooks, name, msg, msg.subject.split(".").slice(depth), handler);
      },
    });
  };
  return { service, add };
}

/** Runs one request: synchronous as long as the handler is. Never throws and never rejects. */
function handle(hooks: EndpointHooks, endpoint: string, msg: ServiceMsg, tokens: string[], handler: EndpointHandler): void {
  const started = performance.now();
  let result: HandlerResult;
  try {
    hooks.admit?.(endpoint, tokens);
    const body = parseRequestBody(msg.data, hooks.limits);
    result = handler(tokens, body, msg.data);
  } catch (e) {
    fail(hooks, endpoint, msg, e, started);
    return;
  }
  if (result instanceof Promise) {
    result.then(
      (r: object | Uint8Array) => succeed(hooks, endpoint, msg, r, started),
      (e: unknown) => fail(hooks, endpoint, msg, e, started),
    );
  } else {
    succeed(hooks, endpoint, msg, result, started);
  }
}

function succeed(hooks: EndpointHooks, endpoint: string, msg: ServiceMsg, result: object | Uint8Array, started: number): void {
  if (hooks.keepReply && !hooks.keepReply(endpoint)) {
    hooks.observe?.(endpoint, "reply_dropped", (performance.now() - started) / 1000);
    return;
  }
  try {
    // Bytes are a reply serialized ahead of time (cached lookups): sent as they are.
    if (msg.reply) msg.respond(result instanceof Uint8Array ? result : utf8(JSON.stringify(result)));
  } catch (e) {
    fail(hooks, endpoint, msg, e, started);
    return;
  }
  hooks.observe?.(endpoint, "ok", (performance.now() - started) / 1000);
}

function fail(hooks: EndpointHooks, endpoint: string, msg: ServiceMsg, e: unknown, started: number): void {
  const error = e instanceof RegistryError ? e : new RegistryError(ErrorCode.Internal, "internal error", { cause: e });
  const outcome = error instanceof RateLimitedError ? "rate_limited" : error instanceof ShedError ? "shed" : error.code;
  const correlationId = newCorrelationId();
  if (error.code === ErrorCode.Internal) {
    hooks.log.error({ err: e, endpoint, subject: msg.subject, correlation_id: correlationId }, "request failed");
  } else if (hooks.logRefusal) {
    hooks.logRefusal(endpoint, msg.subject, error, correlationId);
  } else {
    hooks.log.debug({ endpoint, subject: msg.subject, code: error.code, correlation_id: correlationId, msg: error.message }, "request refused");
  }
  if (msg.reply) {
    try {
      respondWithError(msg, error, correlationId);
    } catch (err) {
      // A closed connection: the requester times out, as it would had the reply been lost.
      hooks.log.warn({ err, endpoint, correlation_id: correlationId }, "could not send an error reply");
    }
  }
  hooks.observe?.(endpoint, outcome, (performance.now() - started) / 1000);
}

/**
 * An error reply as PROTOCOL.md section 1 gives it: the status headers, the correlation id
 * header, and the error body; an internal error's message names the correlation id the log
 * repeats. Throws when the connection cannot send it.
 */
export function respondWithError(msg: ServiceMsg, error: RegistryError, correlationId: string): void {
  const h = headers();
  h.set(CORRELATION_HEADER, correlationId);
  const message = error.code === ErrorCode.Internal ? `${error.message} (correlation id ${correlationId})` : error.message;
  const body = JSON.stringify({ error: { ...error.toBody().error, message } });
  msg.respondError(error.status, oneLine(message), body, { headers: h });
}

/**
 * Twelve random hex digits, as the log repeats them. Taken from randomUUID, which draws its
 * randomness in batches: randomBytes(6) per refusal was 4.3 % of the registry's CPU when an
 * overloaded store refused heartbeats by the tens of thousands a second (issue 20's profile).
 * The UUID's first eight and the four after its first dash are random (the version is later).
 */
export function newCorrelationId(): string {
  const u = randomUUID();
  return u.slice(0, 8) + u.slice(9, 13);
}

/** Header values cannot hold line breaks. */
const oneLine = (s: string): string => s.replace(/[\r\n]+/g, " ").slice(0, 1024);
