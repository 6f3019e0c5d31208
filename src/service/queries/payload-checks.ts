/**
 * The `check` op's payload validation (PROTOCOL.md section 11.4; the MCP front's
 * `tasks_delegate` checks through it too). Matching a payload against a capability's schema is
 * the one costly thing a query can make the registry do: RE2 runs in time linear in the input
 * times the size of the pattern's program, so a 240 KB value against `(?:\p{L}|\p{N}){1000}`
 * took 4.3 s, on the event loop that answers every other request (adversarial review). The
 * loop now only picks the schema and hands the request's bytes over; the validation runs in
 * worker threads (adapters/workers/payload-check-pool.ts), each keeping the validators it
 * compiled by schema text, under a time budget and a bounded queue, whose refusals are
 * structured errors (429 `limit_exceeded`, 503 `unavailable`).
 */
import type { ErrorIssue } from "../../protocol/errors.js";
import type { PayloadDirection } from "../../protocol/messages.js";
import { PayloadChecker } from "../../domain/spec/payload-check.js";

/**
 * One validation for a worker: the schema as JSON text (the key of its compiled validator
 * there) and the request whose `payload` field is checked, as the bytes it came in (copied:
 * no parse or serialization on the loop) or as JSON text.
 */
export type PayloadCheckJob = { readonly schema: string; readonly request: Uint8Array | string; readonly direction: PayloadDirection };
/** The step in which a worker compiles a job's schema, when it has not yet: bounded apart from the check. */
export const COMPILE_PHASE = "compile";

/** Runs jobs off the event loop; rejects with a RegistryError when it refuses one. */
export interface PayloadCheckPool {
  check(job: PayloadCheckJob): Promise<ErrorIssue[]>;
}

/** The payload as the query parsed it, and the request's bytes when it came over the wire. */
export type CheckedPayload = { readonly value: unknown; readonly request?: Uint8Array | undefined };

/** The port QueryService checks through: the problems of the payload, empty when it is valid. */
export interface PayloadChecks {
  check(schema: unknown, payload: CheckedPayload, direction: PayloadDirection): Promise<ErrorIssue[]>;
}

export class PooledPayloadChecks implements PayloadChecks {
  /** Schema text by resolved schema object (SchemaResolution keeps one object per schema and change of the stored schemas). */
  private readonly texts = new WeakMap<object, string>();

  constructor(private readonly pool: PayloadCheckPool) {}

  check(schema: unknown, payload: CheckedPayload, direction: PayloadDirection): Promise<ErrorIssue[]> {
    // Provably cheap: a schema that accepts anything never reads the payload.
    if (acceptsAnything(schema)) return Promise.resolve([]);
    // The bytes are copied: they may be a view of the connection's read buffer, which a
    // structured clone would copy whole.
    const request = payload.request ? payload.request.slice() : JSON.stringify({ payload: payload.value });
    return this.pool.check({ schema: this.textOf(schema), request, direction });
  }

  private textOf(schema: unknown): string {
    if (typeof schema !== "object" || schema === null) return JSON.stringify(schema) ?? "null";
    let text = this.texts.get(schema);
    if (text === undefined) this.texts.set(schema, (text = JSON.stringify(schema)));
    return text;
  }
}

/**
 * Validates on the caller's thread: unit tests and benches of the query service. The service
 * itself always checks in workers (start/checks.ts startPayloadChecks).
 */
export class InlinePayloadChecks implements PayloadChecks {
  private readonly checker = new PayloadChecker();

  async check(schema: unknown, payload: CheckedPayload, direction: PayloadDirection): Promise<ErrorIssue[]> {
    return this.checker.check(schema, payload.value, direction);
  }
}

const acceptsAnything = (schema: unknown): boolean =>
  schema === true || (typeof schema === "object" && schema !== null && !Array.isArray(schema) && Object.keys(schema).length === 0);
