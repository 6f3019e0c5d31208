/**
 * `sbom export`: the fleet's SBOM, or one agent's and everything it depends on, as CycloneDX
 * 1.6 JSON (default) or SPDX 2.3 JSON (PROTOCOL.md section 11.2), from the running registry,
 * or with `--file` offline from a registry file, as the registry would hold it once loaded.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { sbomDocument, type SbomFormat } from "../../domain/sbom/sbom-document.js";
import { visibleTo } from "../../domain/model/model.js";
import { packageVersion } from "../../version.js";
import { ExitCode, UsageError, str, type Command } from "../context.js";
import { loadFileFleet } from "../file-fleet.js";

const FORMATS: readonly SbomFormat[] = ["cyclonedx", "spdx"];

/** The document from a registry file: the same builder as the `sbom` op, on the file's own view. */
function fromFile(path: string, format: SbomFormat, agentType: string | undefined): Record<string, unknown> {
  const fleet = loadFileFleet(path);
  if (!fleet.ok) throw new UsageError(`${path}: ${fleet.errors.join("; ")}`);
  const root = agentType === undefined ? undefined : fleet.view.get(agentType);
  if (agentType !== undefined && (root === undefined || !visibleTo(root, null))) throw new UsageError(`${path} has no agent ${agentType}`);
  const doc = sbomDocument(fleet.view, format, root, null, { serial: randomUUID(), now: Date.now(), toolVersion: packageVersion() }, Number.POSITIVE_INFINITY);
  return doc!;
}

export const sbomCommand: Command = {
  name: "sbom",
  summary: "export the fleet's (or one agent's) SBOM as CycloneDX 1.6 or SPDX 2.3 JSON",
  usage: "sbom export [--format cyclonedx|spdx] [--agent TYPE] [--file REGISTRY_FILE] [--output FILE]",
  examples: [
    "agent-registry sbom export > fleet.cdx.json",
    "agent-registry sbom export --agent writer --format spdx --output writer.spdx.json",
    "agent-registry sbom export --file deploy/config/agent-registry.json",
  ],
  options: {
    format: { type: "string", value: "FORMAT", description: "cyclonedx (default) or spdx" },
    agent: { type: "string", value: "TYPE", description: "one agent and everything it depends on (default: the whole fleet)" },
    file: { type: "string", value: "FILE", description: "read this registry file offline instead of asking the registry" },
    output: { type: "string", value: "FILE", description: "write the document to FILE instead of standard output" },
  },
  args: { min: 1, max: 1 },
  async run(ctx) {
    if (ctx.args[0] !== "export") throw new UsageError(`unknown sbom action "${ctx.args[0]}": the one action is export`);
    const format = str(ctx.values["format"]) ?? "cyclonedx";
    if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format: expected ${FORMATS.join(" or ")}, got "${format}"`);
    const agentType = str(ctx.values["agent"]);
    const file = str(ctx.values["file"]);
    const doc =
      file !== undefined
        ? fromFile(file, format as SbomFormat, agentType)
        : await (await ctx.client()).sbom({ format: format as SbomFormat, ...(agentType !== undefined ? { agent_type: agentType } : {}) });
    const output = str(ctx.values["output"]);
    if (output === undefined) ctx.printJson(doc);
    else {
      writeFileSync(output, `${JSON.stringify(doc, null, 2)}\n`);
      ctx.io.stderr(`wrote ${format === "spdx" ? "an SPDX 2.3" : "a CycloneDX 1.6"} SBOM to ${output}\n`);
    }
    return ExitCode.Ok;
  },
};
