// Flat config: the recommended JS and type-aware-free TypeScript rules, plus the
// architectural rule of STYLE.md that the domain layer does no I/O.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "bench/.build/**", "bench/.scratch/**"] },
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
);
