/**
 * The MCP Registry's own schemas (test/fixtures/mcp-registry), compiled once: the generic
 * API's response bodies from openapi.yaml (OpenAPI 3.1, JSON Schema 2020-12, with ajv's 2020
 * build), and server.schema.json (draft-07, with ajv's default build) for the `server` record.
 */
import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/mcp-registry/${name}`, import.meta.url), "utf8");

const openapi = parse(fixture("openapi.yaml")) as { $id: string; components: { schemas: Record<string, unknown> } };
const serverSchema = JSON.parse(fixture("server.schema.json")) as { $id: string };

const ajv2020 = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv2020.addSchema({ $id: openapi.$id, components: { schemas: openapi.components.schemas } });
const component = (name: string): ValidateFunction => ajv2020.compile({ $ref: `${openapi.$id}#/components/schemas/${name}` });

const ajv07 = new Ajv({ strict: false, allErrors: true, validateFormats: false });

export const mcpRegistrySchemas = {
  serverList: component("ServerList"),
  serverResponse: component("ServerResponse"),
  serverDetail: component("ServerDetail"),
  serverJson: ajv07.compile(serverSchema),
  /** The `{error}` body openapi.yaml gives every error response (written inline there, not a component). */
  error: ajv2020.compile({ type: "object", required: ["error"], properties: { error: { type: "string", minLength: 1 } }, additionalProperties: false }),
};

/** Every validator's complaint about a body, as one line for an expect message; "" when it is valid. */
export function mcpProblems(validate: ValidateFunction, body: unknown): string {
  return validate(body) ? "" : (ajv2020.errorsText(validate.errors) || JSON.stringify(validate.errors));
}

/** A ServerResponse checked against both documents: the API's ServerResponse and server.schema.json for its `server`. */
export function serverResponseProblems(body: unknown): string {
  const server = (body as { server?: unknown }).server;
  return [mcpProblems(mcpRegistrySchemas.serverResponse, body), mcpProblems(mcpRegistrySchemas.serverJson, server)].filter((p) => p !== "").join("; ");
}
