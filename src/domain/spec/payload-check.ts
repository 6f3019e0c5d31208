/**
 * Checks a task payload against a capability's input (or output) schema: the `check` op
 * (PROTOCOL.md section 11.4) and the MCP front's `tasks_delegate` before it sends (section
 * 13). ajv runs with the options the registry compiles agents' schemas with
 * (schema-compiler.ts: no `$data`, no remote refs, the linear-time regex engine), plus every
 * error, so a caller (or a model) learns all it must fix at once. The registry already
 * compiled each schema when the agent registered, so a schema here is known to compile
 * within bounds; matching a payload is another matter (RE2 is linear in the input times the
 * size of the pattern's program: seconds for a long value and a large pattern), so the
 * service runs this in worker threads with a time budget (adapters/workers/payload-worker.ts).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { AJV_OPTIONS, declaresDraft2020 } from "./schema-compiler.js";
import type { ErrorIssue } from "../../protocol/errors.js";
import type { PayloadDirection } from "../../protocol/messages.js";

/** Validators kept, by schema text; past it the oldest goes. */
const CACHE_SIZE = 64;
/** Compilations per pair of ajv instances, which keep every compiled schema for good (schema-compiler.ts). */
const COMPILES_PER_INSTANCE = 50;

const OPTIONS = { ...AJV_OPTIONS, allErrors: true };
/** Problems reported at most, and the length a path is cut to: enough to fix a payload by, and a reply far within max_payload. */
export const MAX_ISSUES = 100;
const MAX_PATH_CHARS = 512;


type Checked = { value: unknown; path: string };

/**
 * What is checked: the payload itself, or for an A2A message (`{"parts": [...]}`) the data of
 * its first data part: `{"kind": "data", "data": ...}` (v0.3) or `{"data": ...}` (v1.0).
 */
export function checkedValue(payload: unknown): Checked | { problem: ErrorIssue } {
  if (!isObject(payload) || !Array.isArray(payload["parts"])) return { value: payload, path: "payload" };
  const parts = payload["parts"] as unknown[];
  const at = parts.findIndex((p) => isObject(p) && Object.hasOwn(p, "data") && (p["kind"] === undefined || p["kind"] === "data"));
  if (at < 0) return { problem: { path: "payload.parts", message: "an A2A message is checked through its first data part, and this one has none" } };
  return { value: (parts[at] as Record<string, unknown>)["data"], path: `payload.parts.${at}.data` };
}

export class PayloadChecker {
  #draft7 = new Ajv(OPTIONS);
  #draft2020: Ajv2020 | undefined;
  #compiles = 0;
  readonly #validators = new Map<string, ValidateFunction>();

  /** The problems of `payload` under `schema` (the capability's input or output schema); empty when it is valid. */
  check(schema: unknown, payload: unknown, direction: PayloadDirection = "input"): ErrorIssue[] {
    if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return [];
    const target = checkedValue(payload);
    if ("problem" in target) return [target.problem];
    if (schema === false) return [{ path: target.path, message: `the capability's ${direction} schema accepts nothing` }];
    if (!isObject(schema)) return [{ path: target.path, message: `the capability's ${direction} schema is not a schema` }];
    return problems(this.#validator(schema), target);
  }

  /** True when `prepare(schemaText)` finds the validator compiled (it would not compile now). */
  isPrepared(schemaText: string): boolean {
    return this.#validators.has(schemaText);
  }

  /**
   * The check against a schema sent as its JSON text (a worker's side), compiled now or found
   * compiled: the text is the key of the validator, so a schema seen before is neither parsed
   * nor compiled again. Compiling and checking are two steps, so a worker can bound them apart.
   */
  prepare(schemaText: string): (payload: unknown, direction?: PayloadDirection) => ErrorIssue[] {
    let validate = this.#validators.get(schemaText);
    if (!validate) {
      const schema = JSON.parse(schemaText) as unknown;
      if (!isObject(schema) || Object.keys(schema).length === 0) return (payload, direction = "input") => this.check(schema, payload, direction);
      validate = this.#validator(schema, schemaText);
    }
    const compiled = validate;
    return (payload) => {
      const target = checkedValue(payload);
      return "problem" in target ? [target.problem] : problems(compiled, target);
    };
  }

  #validator(schema: Record<string, unknown>, key = JSON.stringify(schema)): ValidateFunction {
    const cached = this.#validators.get(key);
    if (cached) return cached;
    if (++this.#compiles > COMPILES_PER_INSTANCE) {
      this.#draft7 = new Ajv(OPTIONS);
      this.#draft2020 = undefined;
      this.#compiles = 1;
    }
    const ajv = declaresDraft2020(schema) ? (this.#draft2020 ??= new Ajv2020(OPTIONS)) : this.#draft7;
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(schema);
    } finally {
      // Two agents may use the same $id: the compiled function is kept here, not in ajv.
      ajv.removeSchema(schema);
    }
    if (this.#validators.size >= CACHE_SIZE) this.#validators.delete(this.#validators.keys().next().value!);
    this.#validators.set(key, validate);
    return validate;
  }
}

function problems(validate: ValidateFunction, target: Checked): ErrorIssue[] {
  if (validate(target.value)) return [];
  return (validate.errors ?? []).slice(0, MAX_ISSUES).map((e) => issueOf(e, target.path));
}

/** `/items/0` with a missing `name` becomes `payload.items.0.name`. */
function issueOf(e: ErrorObject, root: string): ErrorIssue {
  const tokens = e.instancePath === "" ? [] : e.instancePath.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === "required" && params.missingProperty !== undefined) tokens.push(params.missingProperty);
  if (e.keyword === "additionalProperties" && params.additionalProperty !== undefined) tokens.push(params.additionalProperty);
  const path = [root, ...tokens].join(".");
  // A payload's keys are the caller's, as long as its body allows: a path is cut, never echoed whole.
  return { path: path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}...` : path, message: e.message ?? e.keyword };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
