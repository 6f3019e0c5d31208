/**
 * A JSON Schema shown as a reader would want it: its properties as a nested list with type,
 * "required" and description, and the schema itself, folded, below. Depth and breadth are
 * bounded: a page must stay responsive whatever an agent registered.
 */
import { h, type Child } from "./dom.js";

type Schema = Record<string, unknown>;
const MAX_DEPTH = 6;
const MAX_PROPS = 100;

export function schemaView(title: string, schema: unknown): HTMLElement {
  return h(
    "section",
    { class: "schema" },
    h("h5", {}, title),
    describe(schema, 0),
    h("details", {}, h("summary", {}, "JSON Schema"), h("pre", {}, h("code", {}, JSON.stringify(schema, null, 2)))),
  );
}

function typeOf(s: Schema): string {
  const base = baseType(s);
  return Array.isArray(s["enum"]) && !base.startsWith("one of") ? `${base}, one of ${(s["enum"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}` : base;
}

function baseType(s: Schema): string {
  if (Array.isArray(s["type"])) return (s["type"] as unknown[]).join(" | ");
  if (typeof s["type"] === "string") {
    if (s["type"] === "array" && isSchema(s["items"])) return `array of ${typeOf(s["items"])}`;
    return s["type"];
  }
  if (Array.isArray(s["enum"])) return `one of ${(s["enum"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  if ("const" in s) return `= ${JSON.stringify(s["const"])}`;
  for (const k of ["oneOf", "anyOf", "allOf"]) if (Array.isArray(s[k])) return k;
  if (typeof s["$ref"] === "string") return `→ ${s["$ref"]}`;
  return "any";
}

function isSchema(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(schema: unknown, depth: number): Child {
  if (schema === true || (isSchema(schema) && Object.keys(schema).length === 0)) return h("p", { class: "muted" }, "anything");
  if (!isSchema(schema)) return h("p", { class: "muted" }, JSON.stringify(schema));
  const props = isSchema(schema["properties"]) ? Object.entries(schema["properties"]) : [];
  const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as unknown[]).map(String) : []);
  const head = h("p", {}, h("span", { class: "type" }, typeOf(schema)), typeof schema["description"] === "string" ? ` — ${schema["description"]}` : null);
  if (props.length === 0 || depth >= MAX_DEPTH) return head;
  return h(
    "div",
    {},
    head,
    h(
      "ul",
      { class: "props" },
      ...props.slice(0, MAX_PROPS).map(([name, sub]) =>
        h(
          "li",
          {},
          h("code", {}, name),
          " ",
          h("span", { class: "type" }, isSchema(sub) ? typeOf(sub) : "any"),
          required.has(name) ? h("span", { class: "req" }, " required") : null,
          isSchema(sub) && typeof sub["description"] === "string" ? h("span", { class: "muted" }, ` — ${sub["description"]}`) : null,
          isSchema(sub) && isSchema(sub["properties"]) ? describe({ ...sub, description: undefined }, depth + 1) : null,
        ),
      ),
      props.length > MAX_PROPS ? h("li", { class: "muted" }, `… ${props.length - MAX_PROPS} more`) : null,
    ),
  );
}
