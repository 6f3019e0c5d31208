/**
 * The write use case of the named schemas (PROTOCOL.md section 11.1): `registry.schema.put.<name>`.
 * A version is written once and never changed: the key is created with a compare-and-set on
 * "absent", so of two replicas racing to put the same version only one write lands; the other
 * reads what landed and answers as the same put again (idempotent) or `conflict`.
 *
 * What a stored schema may hold is narrower than a capability schema, because it is inlined
 * into others: no `$id` or anchors (two copies in one document would clash), no local `$ref`
 * (`#/...` would point into whichever schema inlines it). It may refer to other stored
 * schemas by name. It must compile once its refs are inlined, within the limits of any
 * capability schema; and the registry holds at most REGISTRY_MAX_SCHEMAS of them.
 */
import type { ErrorIssue } from "../../protocol/errors.js";
import type { SchemaPutReply } from "../../protocol/messages.js";
import { ErrorCode, RegistryError, conflict, invalidRequest, limitExceeded } from "../../domain/errors.js";
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { storeError } from "./store-errors.js";
import { encodeSchemaRecord, readSchemaRecord, sameContent, type SchemaRecord } from "../../domain/schemas/schema-record.js";
import { ONE_SCHEMA, SCHEMA_ARRAY, SCHEMA_MAP } from "../../domain/spec/schema-keywords.js";
import { namedRef } from "../../domain/schemas/schema-refs.js";
import type { SchemaChecks } from "../../domain/spec/validation.js";
import { describeIssues } from "../../domain/spec/validation.js";
import { schemaKey } from "../../domain/model/records.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Clock } from "../clock.js";
import type { SchemaPutMessage } from "../../domain/messages.js";
import { resolveForWrite } from "../queries/schema-refs.js";

export type SchemaRegistrarDeps = {
  store: Store;
  view: RegistryView;
  checker: SchemaChecks;
  clock: Clock;
  /** REGISTRY_MAX_SCHEMAS: versions of named schemas the registry keeps. */
  maxSchemas: number;
  bucketMaxBytes: number;
  /**
   * Brings the view up to the store's current revision (bounded wait): a new version is
   * counted against REGISTRY_MAX_SCHEMAS as the store holds them, not as the view has applied
   * them so far (a put right after another could otherwise pass the limit).
   */
  catchUp?: () => Promise<void>;
};

/** Issues named in one refusal. */
const MAX_ISSUES = 20;

export class SchemaRegistrar {
  constructor(private readonly deps: SchemaRegistrarDeps) {}

  async put(name: string, msg: SchemaPutMessage): Promise<SchemaPutReply> {
    const { view, store } = this.deps;
    const description = msg.description ?? "";
    const content = { schema: msg.schema, description };
    let known = view.namedSchemas.get(name, msg.version);
    if (!known) {
      // A new version for this view: puts are rare, so it first catches up with the store.
      await this.deps.catchUp?.();
      known = view.namedSchemas.get(name, msg.version);
    }
    if (known) return this.again(name, msg.version, known, content, known.revision);

    const issues = inliningIssues(msg.schema);
    if (issues.length > 0) throw invalidRequest(`schema cannot be stored: ${describeIssues(issues)}`, issues.slice(0, MAX_ISSUES));
    if (view.namedSchemas.size >= this.deps.maxSchemas) {
      throw limitExceeded(`the registry already holds ${view.namedSchemas.size} schema versions`, "REGISTRY_MAX_SCHEMAS", this.deps.maxSchemas);
    }
    const refs = await resolveForWrite([msg.schema], ["schema"], view.namedSchemas, store);
    if ("issues" in refs) throw invalidRequest(`schema cannot be stored: ${describeIssues(refs.issues)}`, refs.issues.slice(0, MAX_ISSUES));
    const { verdicts } = await this.deps.checker.checkAll(refs.resolved);
    const verdict = verdicts[0];
    if (verdict) {
      const issue = { path: ["schema", verdict.path].filter(Boolean).join("."), message: `schema does not compile: ${verdict.message}` };
      throw invalidRequest(`schema cannot be stored: ${describeIssues([issue])}`, [issue]);
    }

    const record: SchemaRecord = { kind: "schema", name, version: msg.version, schema: msg.schema, description, created_at: this.deps.clock.now() };
    const key = schemaKey(name, msg.version);
    try {
      const revision = await store.write(key, encodeSchemaRecord(record), 0);
      return { name, version: msg.version, created: true, revision };
    } catch (e) {
      if (!(e instanceof StoreConflictError)) throw storeError(e, this.deps.bucketMaxBytes);
    }
    // Lost the create: another put (or replica) stored this version first. Read what it stored.
    let entry;
    try {
      entry = await store.get(key);
    } catch (e) {
      throw storeError(e, this.deps.bucketMaxBytes);
    }
    const stored = entry && entry.operation === "PUT" ? readSchemaRecord(entry.value, name, msg.version) : null;
    if (!entry || stored === null || typeof stored === "string") {
      throw new RegistryError(ErrorCode.Conflict, `schema ${name} version ${msg.version} was written by someone else meanwhile and cannot be read back; retry`);
    }
    return this.again(name, msg.version, stored, content, entry.revision);
  }

  /** A put of a version already stored: the same content is idempotent, other content a conflict. */
  private again(name: string, version: string, stored: { schema: unknown; description: string }, content: { schema: unknown; description: string }, revision: number): SchemaPutReply {
    if (!sameContent(stored, content)) {
      const what = stored.description === content.description ? "schema" : "description";
      throw conflict(`schema ${name} version ${version} is already stored with another ${what}; versions are immutable: put a new version`);
    }
    return { name, version, created: false, revision };
  }

}

/** What would break once the schema is inlined into another: `$id`, anchors, local refs; and bad named refs. */
export function inliningIssues(schema: unknown): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  const stack: Array<{ node: unknown; path: string }> = [{ node: schema, path: "schema" }];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { node, path } = stack.pop()!;
    if (typeof node !== "object" || node === null || Array.isArray(node)) continue;
    const obj = node as Record<string, unknown>;
    for (const k of ["$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef"]) {
      if (Object.hasOwn(obj, k)) issues.push({ path: `${path}.${k}`, message: `${k} is not allowed in a stored schema: it would repeat wherever the schema is inlined` });
    }
    const ref = obj["$ref"];
    const named = namedRef(obj);
    if (named && "bad" in named) issues.push({ path: `${path}.$ref`, message: named.bad });
    else if (typeof ref === "string" && !named) issues.push({ path: `${path}.$ref`, message: `only refs to stored schemas ("#Name:1.0.0") are allowed in a stored schema; ${JSON.stringify(ref.slice(0, 100))} would point into whichever schema inlines it` });
    for (const [key, value] of Object.entries(obj)) {
      if (ONE_SCHEMA.has(key)) stack.push({ node: value, path: `${path}.${key}` });
      else if (SCHEMA_ARRAY.has(key) && Array.isArray(value)) value.forEach((v, i) => stack.push({ node: v, path: `${path}.${key}.${i}` }));
      else if (SCHEMA_MAP.has(key) && typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) stack.push({ node: v, path: `${path}.${key}.${k}` });
    }
  }
  return issues;
}
