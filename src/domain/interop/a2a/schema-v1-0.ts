/**
 * The A2A v1.0 Agent Card as a JSON Schema (draft-07), built from the protobuf definition:
 * a2aproject/A2A, specification/a2a.proto at tag v1.0.0 (commit 17369575; the messages an
 * AgentCard reaches are unchanged at v1.0.1, commit 3303592, which only rewords comments). At
 * v1.0 the proto lives at specification/a2a.proto; v1.0 publishes no JSON Schema of its own
 * (specification/json/README.md: a2a.json is a generated, uncommitted artifact).
 *
 * How the proto becomes this schema:
 *   - field names are the ProtoJSON names, lowerCamelCase (`supported_interfaces` ->
 *     `supportedInterfaces`), which the v1.0 specification requires of every JSON form (its
 *     section 5.5);
 *   - `required` lists exactly the fields marked `(google.api.field_behavior) = REQUIRED`;
 *   - `string` -> string, `bool` -> boolean, `repeated X` -> array, `map<string, X>` ->
 *     object of X, `google.protobuf.Struct` -> object;
 *   - a `oneof` (SecurityScheme.scheme, OAuthFlows.flow) is an object that must set exactly
 *     one of its fields: ProtoJSON writes the chosen field under its own name, and a scheme
 *     or flow with none set is unusable (the A2A JS SDK refuses one).
 *
 * Objects are open as in the v0.3.0 schema: an unknown field is a warning (card-advice.ts),
 * not a schema error. v1.0 moved the protocol version onto each interface, so the card itself
 * has no `protocolVersion`.
 */

const stringArray = { type: "array", items: { type: "string" } } as const;
const stringMap = { type: "object", additionalProperties: { type: "string" } } as const;
const ref = (name: string) => ({ $ref: `#/definitions/${name}` }) as const;
const exactlyOne = (...fields: string[]) => fields.map((field) => ({ required: [field] }));

export const A2A_CARD_SCHEMA_V1_0_ID = "urn:agent-registry:a2a:agent-card:1.0";

export const A2A_CARD_SCHEMA_V1_0 = {
  $id: A2A_CARD_SCHEMA_V1_0_ID,
  $schema: "http://json-schema.org/draft-07/schema#",
  $ref: "#/definitions/AgentCard",
  definitions: {
    AgentCard: {
      type: "object",
      required: ["name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"],
      properties: {
        name: { type: "string" },
        description: { type: "string" },
        supportedInterfaces: { type: "array", items: ref("AgentInterface") },
        provider: ref("AgentProvider"),
        version: { type: "string" },
        documentationUrl: { type: "string" },
        capabilities: ref("AgentCapabilities"),
        securitySchemes: { type: "object", additionalProperties: ref("SecurityScheme") },
        securityRequirements: { type: "array", items: ref("SecurityRequirement") },
        defaultInputModes: stringArray,
        defaultOutputModes: stringArray,
        skills: { type: "array", items: ref("AgentSkill") },
        signatures: { type: "array", items: ref("AgentCardSignature") },
        iconUrl: { type: "string" },
      },
    },
    AgentInterface: {
      type: "object",
      required: ["url", "protocolBinding", "protocolVersion"],
      properties: {
        url: { type: "string" },
        protocolBinding: { type: "string" },
        tenant: { type: "string" },
        protocolVersion: { type: "string" },
      },
    },
    AgentProvider: {
      type: "object",
      required: ["url", "organization"],
      properties: { url: { type: "string" }, organization: { type: "string" } },
    },
    AgentCapabilities: {
      type: "object",
      properties: {
        streaming: { type: "boolean" },
        pushNotifications: { type: "boolean" },
        extensions: { type: "array", items: ref("AgentExtension") },
        extendedAgentCard: { type: "boolean" },
      },
    },
    AgentExtension: {
      type: "object",
      properties: {
        uri: { type: "string" },
        description: { type: "string" },
        required: { type: "boolean" },
        params: { type: "object" },
      },
    },
    AgentSkill: {
      type: "object",
      required: ["id", "name", "description", "tags"],
      properties: {
        id: { type: "string" },
        name: { type: "string" },
        description: { type: "string" },
        tags: stringArray,
        examples: stringArray,
        inputModes: stringArray,
        outputModes: stringArray,
        securityRequirements: { type: "array", items: ref("SecurityRequirement") },
      },
    },
    AgentCardSignature: {
      type: "object",
      required: ["protected", "signature"],
      properties: { protected: { type: "string" }, signature: { type: "string" }, header: { type: "object" } },
    },
    StringList: { type: "object", properties: { list: stringArray } },
    SecurityRequirement: {
      type: "object",
      properties: { schemes: { type: "object", additionalProperties: ref("StringList") } },
    },
    SecurityScheme: {
      type: "object",
      properties: {
        apiKeySecurityScheme: ref("APIKeySecurityScheme"),
        httpAuthSecurityScheme: ref("HTTPAuthSecurityScheme"),
        oauth2SecurityScheme: ref("OAuth2SecurityScheme"),
        openIdConnectSecurityScheme: ref("OpenIdConnectSecurityScheme"),
        mtlsSecurityScheme: ref("MutualTlsSecurityScheme"),
      },
      oneOf: exactlyOne("apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme"),
    },
    APIKeySecurityScheme: {
      type: "object",
      required: ["location", "name"],
      properties: { description: { type: "string" }, location: { type: "string" }, name: { type: "string" } },
    },
    HTTPAuthSecurityScheme: {
      type: "object",
      required: ["scheme"],
      properties: { description: { type: "string" }, scheme: { type: "string" }, bearerFormat: { type: "string" } },
    },
    OAuth2SecurityScheme: {
      type: "object",
      required: ["flows"],
      properties: { description: { type: "string" }, flows: ref("OAuthFlows"), oauth2MetadataUrl: { type: "string" } },
    },
    OpenIdConnectSecurityScheme: {
      type: "object",
      required: ["openIdConnectUrl"],
      properties: { description: { type: "string" }, openIdConnectUrl: { type: "string" } },
    },
    MutualTlsSecurityScheme: { type: "object", properties: { description: { type: "string" } } },
    OAuthFlows: {
      type: "object",
      properties: {
        authorizationCode: ref("AuthorizationCodeOAuthFlow"),
        clientCredentials: ref("ClientCredentialsOAuthFlow"),
        implicit: ref("ImplicitOAuthFlow"),
        password: ref("PasswordOAuthFlow"),
        deviceCode: ref("DeviceCodeOAuthFlow"),
      },
      oneOf: exactlyOne("authorizationCode", "clientCredentials", "implicit", "password", "deviceCode"),
    },
    AuthorizationCodeOAuthFlow: {
      type: "object",
      required: ["authorizationUrl", "tokenUrl", "scopes"],
      properties: {
        authorizationUrl: { type: "string" },
        tokenUrl: { type: "string" },
        refreshUrl: { type: "string" },
        scopes: stringMap,
        pkceRequired: { type: "boolean" },
      },
    },
    ClientCredentialsOAuthFlow: {
      type: "object",
      required: ["tokenUrl", "scopes"],
      properties: { tokenUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap },
    },
    // Deprecated in v1.0 (kept by the proto); nothing in them is REQUIRED.
    ImplicitOAuthFlow: {
      type: "object",
      properties: { authorizationUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap },
    },
    PasswordOAuthFlow: {
      type: "object",
      properties: { tokenUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap },
    },
    DeviceCodeOAuthFlow: {
      type: "object",
      required: ["deviceAuthorizationUrl", "tokenUrl", "scopes"],
      properties: { deviceAuthorizationUrl: { type: "string" }, tokenUrl: { type: "string" }, refreshUrl: { type: "string" }, scopes: stringMap },
    },
  },
} as const;
