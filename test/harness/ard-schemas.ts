/**
 * The ARD specification's own schemas (test/fixtures/ard), compiled once: the ai-catalog.json
 * manifest, and the OpenAPI document's response bodies, whose `./ai-catalog.schema.json` refs
 * resolve against the manifest schema's `$id`.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { parse } from "yaml";

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/ard/${name}`, import.meta.url), "utf8");

const catalogSchema = JSON.parse(fixture("ai-catalog.schema.json")) as { $id: string };
const openapi = parse(fixture("ard.openapi.yaml")) as { components: { schemas: Record<string, unknown> } };
/** Beside the catalog schema, so the OpenAPI document's relative refs find it. */
const OPENAPI_ID = new URL("ard.openapi.json", catalogSchema.$id).href;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(catalogSchema);
ajv.addSchema({ $id: OPENAPI_ID, components: { schemas: openapi.components.schemas } });

const component = (name: string): ValidateFunction => ajv.compile({ $ref: `${OPENAPI_ID}#/components/schemas/${name}` });

export const ardSchemas = {
  manifest: ajv.getSchema(catalogSchema.$id)!,
  catalogEntry: ajv.compile({ $ref: `${catalogSchema.$id}#/$defs/catalogEntry` }),
  searchRequest: component("SearchRequest"),
  searchResponse: component("SearchResponse"),
  listResponse: component("ListResponse"),
  exploreRequest: component("ExploreRequest"),
  exploreResponse: component("ExploreResponse"),
  error: component("Error"),
};

/** The validator's errors as one line, for an expect message. */
export const problems = (validate: ValidateFunction): string => ajv.errorsText(validate.errors);
