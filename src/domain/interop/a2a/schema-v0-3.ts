/**
 * The A2A v0.3.0 Agent Card as a JSON Schema (draft-07), written from the official one:
 * a2aproject/A2A, specification/json/a2a.json at tag v0.3.0 (commit 8d57eba2). It has the same
 * definitions, property names, types, `required` lists and enums for everything an AgentCard
 * reaches; descriptions and examples are left out.
 *
 * Like the official schema, objects are open: a field A2A does not define is not a schema
 * error (card-advice.ts reports it as a warning instead).
 *
 * One change of form, same meaning: the official `SecurityScheme` is an `anyOf` of five
 * schemes told apart by a `type` constant; here `type` is an enum and each scheme applies
 * through `if`/`then` on it. Both accept exactly the same documents, and this form lets a
 * broken scheme be reported as the one missing field rather than as five failed branches.
 */

const stringArray = { type: "array", items: { type: "string" } } as const;
const stringMap = { type: "object", additionalProperties: { type: "string" } } as const;
/** `security` of a card or a skill: a list of {scheme name: [scope, ...]}. */
const securityRequirements = { type: "array", items: { type: "object", additionalProperties: stringArray } } as const;
const ref = (name: string) => ({ $ref: `#/definitions/${name}` }) as const;

export const A2A_CARD_SCHEMA_V0_3_ID = "urn:agent-registry:a2a:agent-card:0.3.0";

export const A2A_CARD_SCHEMA_V0_3 = {
  $id: A2A_CARD_SCHEMA_V0_3_ID,
  $schema: "http://json-schema.org/draft-07/schema#",
  $ref: "#/definitions/AgentCard",
  definitions: {
    AgentCard: {
      type: "object",
      required: ["capabilities", "defaultInputModes", "defaultOutputModes", "description", "name", "protocolVersion", "skills", "url", "version"],
      properties: {
        additionalInterfaces: { type: "array", items: ref("AgentInterface") },
        capabilities: ref("AgentCapabilities"),
        defaultInputModes: stringArray,
        defaultOutputModes: stringArray,
        description: { type: "string" },
        documentationUrl: { type: "string" },
        iconUrl: { type: "string" },
        name: { type: "string" },
        preferredTransport: { type: "string" },
        protocolVersion: { type: "string" },
        provider: ref("AgentProvider"),
        security: securityRequirements,
        securitySchemes: { type: "object", additionalProperties: ref("SecurityScheme") },
        signatures: { type: "array", items: ref("AgentCardSignature") },
        skills: { type: "array", items: ref("AgentSkill") },
        supportsAuthenticatedExtendedCard: { type: "boolean" },
        url: { type: "string" },
        version: { type: "string" },
      },
    },
    AgentInterface: {
      type: "object",
      required: ["transport", "url"],
      properties: { transport: { type: "string" }, url: { type: "string" } },
    },
    AgentCapabilities: {
      type: "object",
      properties: {
        extensions: { type: "array", items: ref("AgentExtension") },
        pushNotifications: { type: "boolean" },
        stateTransitionHistory: { type: "boolean" },
        streaming: { type: "boolean" },
      },
    },
    AgentExtension: {
      type: "object",
      required: ["uri"],
      properties: {
        description: { type: "string" },
        params: { type: "object" },
        required: { type: "boolean" },
        uri: { type: "string" },
      },
    },
    AgentProvider: {
      type: "object",
      required: ["organization", "url"],
      properties: { organization: { type: "string" }, url: { type: "string" } },
    },
    AgentSkill: {
      type: "object",
      required: ["description", "id", "name", "tags"],
      properties: {
        description: { type: "string" },
        examples: stringArray,
        id: { type: "string" },
        inputModes: stringArray,
        name: { type: "string" },
        outputModes: stringArray,
        security: securityRequirements,
        tags: stringArray,
      },
    },
    AgentCardSignature: {
      type: "object",
      required: ["protected", "signature"],
      properties: { header: { type: "object" }, protected: { type: "string" }, signature: { type: "string" } },
    },
    SecurityScheme: {
      type: "object",
      required: ["type"],
      properties: { type: { type: "string", enum: ["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"] } },
      allOf: [
        { if: { required: ["type"], properties: { type: { const: "apiKey" } } }, then: ref("APIKeySecurityScheme") },
        { if: { required: ["type"], properties: { type: { const: "http" } } }, then: ref("HTTPAuthSecurityScheme") },
        { if: { required: ["type"], properties: { type: { const: "oauth2" } } }, then: ref("OAuth2SecurityScheme") },
        { if: { required: ["type"], properties: { type: { const: "openIdConnect" } } }, then: ref("OpenIdConnectSecurityScheme") },
        { if: { required: ["type"], properties: { type: { const: "mutualTLS" } } }, then: ref("MutualTLSSecurityScheme") },
      ],
    },
    APIKeySecurityScheme: {
      type: "object",
      required: ["in", "name", "type"],
      properties: {
        description: { type: "string" },
        in: { type: "string", enum: ["cookie", "header", "query"] },
        name: { type: "string" },
        type: { type: "string", const: "apiKey" },
      },
    },
    HTTPAuthSecurityScheme: {
      type: "object",
      required: ["scheme", "type"],
      properties: {
        bearerFormat: { type: "string" },
        description: { type: "string" },
        scheme: { type: "string" },
        type: { type: "string", const: "http" },
      },
    },
    OAuth2SecurityScheme: {
      type: "object",
      required: ["flows", "type"],
      properties: {
        description: { type: "string" },
        flows: ref("OAuthFlows"),
        oauth2MetadataUrl: { type: "string" },
        type: { type: "string", const: "oauth2" },
      },
    },
    OpenIdConnectSecurityScheme: {
      type: "object",
      required: ["openIdConnectUrl", "type"],
      properties: {
        description: { type: "string" },
        openIdConnectUrl: { type: "string" },
        type: { type: "string", const: "openIdConnect" },
      },
    },
    MutualTLSSecurityScheme: {
      type: "object",
      required: ["type"],
      properties: { description: { type: "string" }, type: { type: "string", const: "mutualTLS" } },
    },
    OAuthFlows: {
      type: "object",
      properties: {
        authorizationCode: ref("AuthorizationCodeOAuthFlow"),
        clientCredentials: ref("ClientCredentialsOAuthFlow"),
        implicit: ref("ImplicitOAuthFlow"),
        password: ref("PasswordOAuthFlow"),
      },
    },
    AuthorizationCodeOAuthFlow: {
      type: "object",
      required: ["authorizationUrl", "scopes", "tokenUrl"],
      properties: { authorizationUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap, tokenUrl: { type: "string" } },
    },
    ClientCredentialsOAuthFlow: {
      type: "object",
      required: ["scopes", "tokenUrl"],
      properties: { refreshUrl: { type: "string" }, scopes: stringMap, tokenUrl: { type: "string" } },
    },
    ImplicitOAuthFlow: {
      type: "object",
      required: ["authorizationUrl", "scopes"],
      properties: { authorizationUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap },
    },
    PasswordOAuthFlow: {
      type: "object",
      required: ["scopes", "tokenUrl"],
      properties: { refreshUrl: { type: "string" }, scopes: stringMap, tokenUrl: { type: "string" } },
    },
  },
} as const;
