/**
 * Checks an Agent Card against the schema of its A2A version (schema-v0-3.ts, schema-v1-0.ts)
 * and says what deviates, each deviation at its path inside the card (`skills.0.tags`).
 *
 * The two schemas are ours, not an agent's, so one ajv instance compiles them once, on first
 * use, with `allErrors` (a lenient import reports every deviation, not the first); callers
 * bound how many they pass on. Card data cannot make validation recurse: neither schema
 * refers to itself, and card-limits.ts bounds the card before it gets here.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { A2aVersion } from "./detect-version.js";
import { A2A_CARD_SCHEMA_V0_3, A2A_CARD_SCHEMA_V0_3_ID } from "./schema-v0-3.js";
import { A2A_CARD_SCHEMA_V1_0, A2A_CARD_SCHEMA_V1_0_ID } from "./schema-v1-0.js";

/** One deviation: `path` is inside the card, dot-separated, "" for the card itself. */
export type CardFinding = { path: string; message: string };

/** How messages name the schema a card was checked against. */
export const SCHEMA_LABEL: Readonly<Record<A2aVersion, string>> = { "0.3": "A2A v0.3.0", "1.0": "A2A v1.0" };

const SCHEMAS = {
  "0.3": { id: A2A_CARD_SCHEMA_V0_3_ID, schema: A2A_CARD_SCHEMA_V0_3 },
  "1.0": { id: A2A_CARD_SCHEMA_V1_0_ID, schema: A2A_CARD_SCHEMA_V1_0 },
} as const;

/** The definitions a card of each version is made of (`AgentSkill`, `SecurityScheme`, ...). */
export type CardDefinition<V extends A2aVersion> = keyof (typeof SCHEMAS)[V]["schema"]["definitions"] & string;

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

function validator(version: A2aVersion, definition: string): ValidateFunction {
  const key = `${SCHEMAS[version].id}#/definitions/${definition}`;
  let validate = validators.get(key);
  if (!validate) {
    ajv ??= createAjv();
    validate = ajv.getSchema(key);
    if (!validate) throw new Error(`no definition ${definition} in the A2A ${version} card schema`);
    validators.set(key, validate);
  }
  return validate;
}

function createAjv(): Ajv {
  // verbose: errors carry the schema that failed, which oneOf messages name the choices from.
  // strictRequired is off because a oneOf branch is `required: [field]` alone, the field
  // being defined next to the oneOf rather than inside the branch.
  const instance = new Ajv({ allErrors: true, strict: true, strictRequired: false, verbose: true, logger: false, validateFormats: false });
  for (const { schema } of Object.values(SCHEMAS)) instance.addSchema(schema as object);
  return instance;
}

/** Whether `value` is a valid `definition` of that version: how export keeps what it can of a card. */
export function conformsTo<V extends A2aVersion>(version: V, definition: CardDefinition<V>, value: unknown): boolean {
  return validator(version, definition)(value) === true;
}

/** Every way the card deviates from its version's schema; [] when it conforms. */
export function checkCardSchema(card: unknown, version: A2aVersion): CardFinding[] {
  const validate = validator(version, "AgentCard");
  if (validate(card)) return [];
  const errors = validate.errors ?? [];
  const findings: CardFinding[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const finding = describe(error, SCHEMA_LABEL[version]);
    if (!finding) continue;
    const key = `${finding.path}\u0000${finding.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push(finding);
  }
  return findings;
}

/** One ajv error in the card's terms, or null for an error that another one already says better. */
function describe(error: ErrorObject, label: string): CardFinding | null {
  const path = error.instancePath.split("/").slice(1).map(unescapePointer).join(".");
  const join = (field: string) => (path ? `${path}.${field}` : field);
  // A failed `if`/`then` is reported by the `then` schema's own errors; the branches of a
  // `oneOf` (each only `required: [one field]`) by the oneOf error itself.
  if (error.keyword === "if" || /\/oneOf\/\d+\//.test(error.schemaPath)) return null;
  switch (error.keyword) {
    case "required":
      return { path: join(String(error.params["missingProperty"])), message: `missing; ${label} requires it` };
    case "type":
      return { path, message: `must be ${article(String(error.params["type"]))} (${label})` };
    case "enum":
      return { path, message: `must be one of ${(error.params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")} (${label})` };
    case "const":
      return { path, message: `must be ${JSON.stringify(error.params["allowedValue"])} (${label})` };
    case "oneOf": {
      const choices = (error.schema as Array<{ required?: string[] }>).flatMap((branch) => branch.required ?? []);
      return { path, message: `must set exactly one of ${choices.join(", ")} (${label})` };
    }
    default:
      return { path, message: `${error.message ?? error.keyword} (${label})` };
  }
}

const article = (type: string): string => (type === "array" || type === "object" || type === "integer" ? `an ${type}` : `a ${type}`);
const unescapePointer = (token: string): string => token.replace(/~1/g, "/").replace(/~0/g, "~");
