/**
 * `schema put NAME FILE --version V`, `schema list`, `schema get NAME VERSION`: the named,
 * versioned schemas of PROTOCOL.md section 11.1, which capability schemas use as
 * `{"$ref": "#NAME:VERSION"}`. A put of a stored version with the same content succeeds and
 * says so; with other content it fails with `conflict` (exit code 1): versions are immutable.
 */
import { ExitCode, UsageError, str, type Command, type CommandContext } from "../context.js";
import { renderFields, renderTable } from "../table.js";
import { readPayload } from "./check.js";

const USAGE = "schema put NAME FILE --version V [--description TEXT] | schema list [--name NAME] | schema get NAME VERSION";

async function put(ctx: CommandContext, name: string, file: string): Promise<number> {
  const version = str(ctx.values["version"]);
  if (!version) throw new UsageError(`schema put needs --version: ${USAGE}`);
  const schema = readPayload(file);
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) throw new UsageError(`${file} is not a JSON Schema (an object or a boolean)`);
  const description = str(ctx.values["description"]);
  const reply = await (await ctx.client()).putSchema(name, { version, schema: schema as Record<string, unknown> | boolean, ...(description !== undefined ? { description } : {}) });
  if (ctx.json) ctx.printJson(reply);
  else ctx.out(reply.created ? `stored ${name} ${version} (revision ${reply.revision}); refer to it as {"$ref": "#${name}:${version}"}` : `${name} ${version} was already stored with this content`);
  return ExitCode.Ok;
}

async function list(ctx: CommandContext): Promise<number> {
  const name = str(ctx.values["name"]);
  const reply = await (await ctx.client()).schemasAll(name !== undefined ? { name } : {});
  if (ctx.json) ctx.printJson(reply);
  else if (reply.schemas.length === 0) ctx.out("no schemas");
  else ctx.out(renderTable(["NAME", "VERSION", "DESCRIPTION"], reply.schemas.map((s) => [s.name, s.version, s.description]), { colors: ctx.colors }));
  return ExitCode.Ok;
}

async function get(ctx: CommandContext, name: string, version: string): Promise<number> {
  const reply = await (await ctx.client()).schema(name, version);
  if (ctx.json) {
    ctx.printJson(reply);
    return ExitCode.Ok;
  }
  const more = reply.used_by_count > reply.used_by.length ? ` (and ${reply.used_by_count - reply.used_by.length} more)` : "";
  ctx.out(renderFields([["name", reply.name], ["version", reply.version], ["description", reply.description], ["used by", `${reply.used_by.join(", ") || "-"}${more}`]], { colors: ctx.colors }));
  ctx.out(JSON.stringify(reply.schema, null, 2));
  return ExitCode.Ok;
}

export const schemaCommand: Command = {
  name: "schema",
  summary: "put, list and get named, versioned JSON Schemas that capability schemas refer to as #NAME:VERSION",
  usage: USAGE,
  examples: [
    "agent-registry schema put Address address.schema.json --version 1.0.0 --description 'a postal address'",
    "agent-registry schema list",
    "agent-registry schema get Address 1.0.0",
  ],
  options: {
    version: { type: "string", value: "V", description: "put: the schema's version, exact semver (1.0.0, 2.1.0-rc.1)" },
    description: { type: "string", value: "TEXT", description: "put: what the schema describes" },
    name: { type: "string", value: "NAME", description: "list: only the versions of this schema" },
  },
  args: { min: 1, max: 3 },
  async run(ctx) {
    const [action, a, b] = ctx.args;
    if (action === "put" && a !== undefined && b !== undefined) return put(ctx, a, b);
    if (action === "list" && a === undefined) return list(ctx);
    if (action === "get" && a !== undefined && b !== undefined) return get(ctx, a, b);
    throw new UsageError(`usage: agent-registry ${USAGE}`);
  },
};
