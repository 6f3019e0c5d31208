/**
 * Security schemes and security requirements between A2A v0.3 and v1.0, for export
 * (export-card.ts). The pairs are the ones of the A2A JS SDK's v0.3 compatibility layer
 * (a2aproject/a2a-js, src/compat/v0_3/translate/security.ts):
 *   v0.3 `{"type": "apiKey", "in", "name"}`       <-> v1.0 `{"apiKeySecurityScheme": {"location", "name"}}`
 *   v0.3 `{"type": "http", ...}`                   <-> `{"httpAuthSecurityScheme": {...}}`
 *   v0.3 `{"type": "oauth2", "flows", ...}`        <-> `{"oauth2SecurityScheme": {"flows": {<one flow>}, ...}}`
 *   v0.3 `{"type": "openIdConnect", ...}`          <-> `{"openIdConnectSecurityScheme": {...}}`
 *   v0.3 `{"type": "mutualTLS", ...}`              <-> `{"mtlsSecurityScheme": {...}}`
 *   v0.3 requirement `{"<scheme>": [scopes]}`      <-> v1.0 `{"schemes": {"<scheme>": {"list": [scopes]}}}`
 * v1.0's OAuthFlows holds one flow: going to v1.0 the first of authorizationCode,
 * clientCredentials, implicit, password is kept (the SDK's order). v0.3 has no deviceCode flow
 * and no pkceRequired: going to v0.3 they are left out. An apiKey `location` other than
 * cookie, header or query (any case) has no v0.3 form, and the scheme is left out.
 *
 * The neutral form in between is the scheme's kind and its fields under v1.0 names; field
 * lists come from the schema definitions, so nothing the target does not define is written.
 */
import { isPlainObject } from "../../spec/spec.js";
import { A2A_CARD_SCHEMA_V0_3 } from "./schema-v0-3.js";
import { A2A_CARD_SCHEMA_V1_0 } from "./schema-v1-0.js";

export const SCHEME_KINDS = ["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"] as const;
export type SchemeKind = (typeof SCHEME_KINDS)[number];
/** A security scheme of either version: its kind and its fields under their v1.0 names. */
export type Scheme = { kind: SchemeKind; fields: Record<string, unknown> };
/** A security requirement: scheme name -> scopes (v0.3's shape). */
export type Requirement = Record<string, string[]>;

/** Per kind: its v1.0 oneof field, and its definition in each schema. */
const KIND: Readonly<Record<SchemeKind, { key: string; v1: string; v0: string }>> = {
  apiKey: { key: "apiKeySecurityScheme", v1: "APIKeySecurityScheme", v0: "APIKeySecurityScheme" },
  http: { key: "httpAuthSecurityScheme", v1: "HTTPAuthSecurityScheme", v0: "HTTPAuthSecurityScheme" },
  oauth2: { key: "oauth2SecurityScheme", v1: "OAuth2SecurityScheme", v0: "OAuth2SecurityScheme" },
  openIdConnect: { key: "openIdConnectSecurityScheme", v1: "OpenIdConnectSecurityScheme", v0: "OpenIdConnectSecurityScheme" },
  mutualTLS: { key: "mtlsSecurityScheme", v1: "MutualTlsSecurityScheme", v0: "MutualTLSSecurityScheme" },
};
/** OAuth flows in the order the SDK picks the one a v1.0 scheme keeps; then v1.0's deviceCode. */
const FLOWS = ["authorizationCode", "clientCredentials", "implicit", "password", "deviceCode"] as const;
const FLOW_DEF: Readonly<Record<(typeof FLOWS)[number], string>> = {
  authorizationCode: "AuthorizationCodeOAuthFlow",
  clientCredentials: "ClientCredentialsOAuthFlow",
  implicit: "ImplicitOAuthFlow",
  password: "PasswordOAuthFlow",
  deviceCode: "DeviceCodeOAuthFlow",
};
const API_KEY_LOCATIONS = ["cookie", "header", "query"];

type Definitions = { readonly [name: string]: { readonly properties?: object } };
const fields = (definitions: Definitions, name: string): string[] => Object.keys(definitions[name]?.properties ?? {});
const V1 = A2A_CARD_SCHEMA_V1_0.definitions as Definitions;
const V0 = A2A_CARD_SCHEMA_V0_3.definitions as Definitions;

function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

export function readSchemeV0_3(value: unknown): Scheme | null {
  if (!isPlainObject(value)) return null;
  const kind = SCHEME_KINDS.find((k) => k === value["type"]);
  if (!kind) return null;
  const out = pick(value, fields(V1, KIND[kind].v1));
  if (kind === "apiKey" && value["in"] !== undefined) out["location"] = value["in"];
  if (kind === "oauth2") out["flows"] = readFlows(value["flows"]);
  return { kind, fields: out };
}

export function readSchemeV1_0(value: unknown): Scheme | null {
  if (!isPlainObject(value)) return null;
  const kind = SCHEME_KINDS.find((k) => isPlainObject(value[KIND[k].key]));
  if (!kind) return null;
  const out = pick(value[KIND[kind].key] as Record<string, unknown>, fields(V1, KIND[kind].v1));
  if (kind === "oauth2") out["flows"] = readFlows(out["flows"]);
  return { kind, fields: out };
}

function readFlows(value: unknown): Record<string, Record<string, unknown>> {
  const flows: Record<string, Record<string, unknown>> = {};
  if (!isPlainObject(value)) return flows;
  for (const flow of FLOWS) {
    const body = value[flow];
    if (isPlainObject(body)) flows[flow] = pick(body, fields(V1, FLOW_DEF[flow]));
  }
  return flows;
}

/** The v0.3 form of a scheme, or null when v0.3 cannot say it. */
export function writeSchemeV0_3(scheme: Scheme): Record<string, unknown> | null {
  const out: Record<string, unknown> = { ...pick(scheme.fields, fields(V0, KIND[scheme.kind].v0)), type: scheme.kind };
  if (scheme.kind === "apiKey") {
    const location = scheme.fields["location"];
    const lower = typeof location === "string" ? location.toLowerCase() : undefined;
    if (lower === undefined || !API_KEY_LOCATIONS.includes(lower)) return null;
    out["in"] = lower;
  }
  if (scheme.kind === "oauth2") {
    const flows = scheme.fields["flows"] as Record<string, Record<string, unknown>>;
    const v0Flows: Record<string, unknown> = {};
    for (const flow of FLOWS) {
      const body = flows[flow];
      if (body && V0[FLOW_DEF[flow]]) v0Flows[flow] = pick(body, fields(V0, FLOW_DEF[flow]));
    }
    out["flows"] = v0Flows;
  }
  return out;
}

/** The v1.0 form of a scheme, or null when v1.0 cannot say it (an oauth2 scheme without a flow). */
export function writeSchemeV1_0(scheme: Scheme): Record<string, unknown> | null {
  const body = pick(scheme.fields, fields(V1, KIND[scheme.kind].v1));
  if (scheme.kind === "oauth2") {
    const flows = scheme.fields["flows"] as Record<string, Record<string, unknown>>;
    const flow = FLOWS.find((f) => flows[f] !== undefined);
    if (!flow) return null;
    body["flows"] = { [flow]: flows[flow] };
  }
  return { [KIND[scheme.kind].key]: body };
}

/** The requirements of a v0.3 list; entries that are not `{name: [scope, ...]}` are left out. */
export function readRequirementsV0_3(value: unknown): Requirement[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is Requirement => isPlainObject(item) && Object.values(item).every(isStringArray));
}

export function readRequirementsV1_0(value: unknown): Requirement[] {
  if (!Array.isArray(value)) return [];
  const out: Requirement[] = [];
  for (const item of value) {
    const schemes = isPlainObject(item) ? (item["schemes"] ?? {}) : undefined;
    if (!isPlainObject(schemes)) continue;
    const entries = Object.entries(schemes).map(([name, scopes]) => [name, isPlainObject(scopes) ? (scopes["list"] ?? []) : undefined] as const);
    if (entries.every(([, list]) => isStringArray(list))) out.push(Object.fromEntries(entries) as Requirement);
  }
  return out;
}

export const writeRequirementsV0_3 = (requirements: readonly Requirement[]): Requirement[] => requirements.map((r) => ({ ...r }));

export const writeRequirementsV1_0 = (requirements: readonly Requirement[]): Array<{ schemes: Record<string, { list: string[] }> }> =>
  requirements.map((r) => ({ schemes: Object.fromEntries(Object.entries(r).map(([name, list]) => [name, { list: [...list] }])) }));

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
