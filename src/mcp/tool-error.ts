/**
 * Errors of the MCP tools (PROTOCOL.md section 13): the registry's codes, plus the three of
 * `tasks_delegate`. A tool that fails returns `{"error": {"code", "message", "issues"?}}` as
 * its structured content with `isError: true`, so a model reads the same body whatever failed:
 * its own arguments, the registry, or the agent it delegated to.
 */
import { ErrorCode, type ErrorIssue } from "../protocol/errors.js";
import { PermissionDeniedError, RegistryClientError, RegistryTimeoutError, RegistryUnreachableError, permissionDenied } from "../client/errors.js";

export const DelegateErrorCode = {
  InvalidPayload: "invalid_payload",
  Timeout: "timeout",
  AgentError: "agent_error",
} as const;

export const TOOL_ERROR_CODES = [...Object.values(ErrorCode), ...Object.values(DelegateErrorCode)] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export type ToolErrorBody = { error: { code: ToolErrorCode; message: string; issues?: ErrorIssue[] } };

/** Most issues one error lists: a model needs the first few to fix its call, not hundreds. */
export const MAX_ISSUES = 20;

/** A failure a tool reports as its result (not as a JSON-RPC error). */
export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly issues: readonly ErrorIssue[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ToolError";
  }
}

/** The error body of any failure: the registry's own code when it answered, else the closest one. */
export function toolErrorBody(e: unknown): ToolErrorBody {
  const body = (code: ToolErrorCode, message: string, issues: readonly ErrorIssue[] = []): ToolErrorBody => ({
    error: { code, message, ...(issues.length > 0 ? { issues: issues.slice(0, MAX_ISSUES) } : {}) },
  });
  if (e instanceof ToolError) return body(e.code, e.message, e.issues);
  if (e instanceof RegistryClientError) return body(e.code, e.message, e.issues);
  // The registry did not answer: a model can retry later, so it is `unavailable`, as the registry
  // itself says when its store cannot be reached.
  if (e instanceof RegistryTimeoutError || e instanceof RegistryUnreachableError) return body(ErrorCode.Unavailable, e.message);
  const denied = e instanceof PermissionDeniedError ? e : permissionDenied(e);
  if (denied) return body(ErrorCode.Internal, `${denied.message} (a deployment problem of this MCP server, not of the call)`);
  return body(ErrorCode.Internal, e instanceof Error ? e.message : String(e));
}

/** The most characters of a caller's own text an error message repeats. */
export const MAX_ECHO_CHARS = 128;

/**
 * A caller's text as an error repeats it: quoted, and cut to MAX_ECHO_CHARS with how much was
 * left out, so an error never costs more than the request (a 1.5 MB tool name came back whole,
 * in the message and again in the error's data).
 */
export function echo(text: string): string {
  if (text.length <= MAX_ECHO_CHARS) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, MAX_ECHO_CHARS))}... (${text.length - MAX_ECHO_CHARS} more characters)`;
}
