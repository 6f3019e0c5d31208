// Flat config: the recommended JS and type-aware-free TypeScript rules, plus the layering of
// STYLE.md: protocol/ imports nothing, domain/ does no I/O, service/ talks to ports (never to
// an adapter), the SDK (client/) loads no server code, and kit/ (shared by server and fronts)
// reaches into neither.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "bench/.build/**", "test/.build/**", "bench/.scratch/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-syntax": ["error", { selector: "TSEnumDeclaration", message: "Use an `as const` object and a derived union type." }],
    },
  },
  {
    // Issue 36: a function a reader can hold in mind. Declaration tables are the exception.
    files: ["src/**/*.ts"],
    ignores: ["src/adapters/http/metrics.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Issue 36: a file a reader can take in, one concept each. No file needs an exception.
    files: ["src/**/*.ts"],
    rules: { "max-lines": ["error", { max: 400, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Tests read wire replies as loose JSON, which is what a client in any language sees.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["node:*", "@nats-io/*", "pino", "prom-client"], message: "src/domain is pure: no I/O, NATS, logging or metrics." },
        ],
      }],
      "no-restricted-globals": ["error", "setTimeout", "setInterval", "process"],
    },
  },
  {
    files: ["src/protocol/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ regex: "^(?!\\./)", message: "src/protocol is the wire contract as pure data: it imports only its own files." }],
      }],
      "no-restricted-globals": ["error", "setTimeout", "setInterval", "process", "Buffer"],
    },
  },
  {
    // What the server and its fronts (MCP, audit, ui, cli) share: it depends on none of them.
    files: ["src/kit/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          {
            group: ["**/service/**", "**/adapters/**", "**/cli/**", "**/mcp/**", "**/audit/**", "**/ui/**", "**/client/**", "**/config/**", "**/start/**", "**/main.js"],
            message: "src/kit is what server and fronts share: it builds on src/protocol and src/domain only, and they import it, never the reverse.",
          },
        ],
      }],
    },
  },
  {
    // The fronts: each has its own entry point and talks to the registry as a client does.
    // The serve command is the one that starts the service itself (main.ts).
    files: ["src/mcp/**/*.ts", "src/audit/**/*.ts", "src/cli/**/*.ts", "src/ui/server/**/*.ts", "src/discovery/**/*.ts"],
    ignores: ["src/cli/serve.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          {
            group: ["**/service/**", "**/adapters/**", "**/start/**", "**/main.js"],
            message: "A front (mcp/, audit/, cli/, ui/, discovery/) builds on src/protocol, src/client, src/domain's pure rules, src/kit and src/config, never on the service's internals or its composition root.",
          },
        ],
      }],
    },
  },
  {
    files: ["src/service/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["**/adapters/**", "**/cli/**", "**/client/**", "**/main.js", "**/config.js"], message: "src/service uses the domain's ports; the composition root (main.ts) wires adapters in." },
          { group: ["@nats-io/*", "prom-client"], message: "src/service does no NATS or metrics I/O of its own: take a port or a hook." },
        ],
      }],
    },
  },
  {
    files: ["src/client/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["**/domain/**", "**/service/**", "**/adapters/**", "**/cli/**", "**/main.js", "**/config.js", "**/version.js"], message: "The SDK imports src/protocol only, never the server." },
          { group: ["zod", "ajv", "semver", "pino", "prom-client", "yaml"], message: "The SDK stays light: these are the server's dependencies." },
        ],
      }],
    },
  },
  {
    // Node scripts: the test command and CI's summary.
    files: ["scripts/**/*.mjs", ".ci/**/*.mjs"],
    languageOptions: { globals: { URL: "readonly", console: "readonly", process: "readonly" } },
  },
  {
    // The page's build script runs in node.
    files: ["src/ui/build-page.mjs"],
    languageOptions: { globals: { URL: "readonly", console: "readonly", Buffer: "readonly" } },
  },
  {
    // The browser code (its own tsconfig, DOM types): no node, and nothing of the server but types.
    files: ["src/ui/web/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["node:*", "@nats-io/*", "pino", "prom-client", "zod", "ajv"], message: "src/ui/web runs in a browser." },
          // ../liveness.js: the one pure rule the page and the server's summary share (no imports of its own).
          { regex: "^\\.\\./(?!shared\\.js$|liveness\\.js$|\\.\\./protocol/)", message: "src/ui/web imports its own files, ../shared.js, ../liveness.js and protocol types only." },
        ],
      }],
    },
  },
);
