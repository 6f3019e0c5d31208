/**
 * Keeps the registry in step with a static registry file (issue: teams start from a
 * checked-in JSON file). Entries are registered with instance `static`, which never expires;
 * entries that leave the file are deregistered (reason `operator`). A broken file at start
 * stops the start with its message; a broken file later is logged and counted, and the last
 * good state stays. Every replica may run this: registering is idempotent and a second
 * deregistration of the same entry is simply `unknown_instance`.
 *
 * The file is today's list of A2A cards or a Registry v2 (or v1 gateway) document (PROTOCOL.md
 * section 11.3, domain/spec/registry-v2/): its schemas are put first, as
 * `registry.schema.put` would (immutable: the same content again is a no-op), so that the
 * entries' `#Name:Version` refs resolve; then its entries are applied as any file's. Schemas
 * are never removed: a stored version may be in use by other specs.
 */
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import { STATIC_INSTANCE_ID } from "../../domain/model/model.js";
import { RemovalReason } from "../../domain/model/records.js";
import { checkAnyRegistryFile, formatProblem, type FileProblem, type FileSchemaPut, type MappingOptions } from "../../domain/spec/registry-v2/index.js";
import type { AgentSpecInput } from "../../domain/spec/spec.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import type { Registrar } from "./registrar.js";

export class RegistryFileError extends Error {
  constructor(readonly path: string, readonly problems: string[]) {
    super(`registry file ${path} is invalid:\n  ${problems.join("\n  ")}`);
    this.name = "RegistryFileError";
  }
}

/** The warnings of the registry file applied last, shared with the queries. */
export type FileWarnings = { current: readonly FileProblem[] };

/** A checked registry file: schemas to put (v2 only), entries to register, warnings to log. */
export type LoadedRegistryFile = { path: string; kind: "agents" | "v2" | "v1"; schemas: FileSchemaPut[]; specs: AgentSpecInput[]; warnings: FileProblem[] };

/** Parses and validates the text of a registry file; throws RegistryFileError naming every problem. */
export function parseRegistryFile(path: string, text: string, options: MappingOptions = {}): LoadedRegistryFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new RegistryFileError(path, [`not JSON: ${(e as Error).message}`]);
  }
  return checkRegistryFile(path, raw, options);
}

/** A parsed registry file of any kind, checked by its own rules (warnings ride along with errors). */
export function checkRegistryFile(path: string, raw: unknown, options: MappingOptions = {}): LoadedRegistryFile {
  const r = checkAnyRegistryFile(raw, options);
  if (!r.ok) throw new RegistryFileError(path, [...r.errors, ...r.warnings.map(formatProblem)]);
  return { path, kind: r.kind, schemas: r.schemas, specs: r.specs, warnings: r.warnings };
}

export class StaticRegistry {
  /** agent types this file put in, with the spec text last applied */
  private applied = new Map<string, string>();

  constructor(
    private readonly deps: {
      registrar: Registrar;
      view: RegistryView;
      log: Logger;
      /** Stores one of the file's named schemas: the schema registrar's put, as `registry.schema.put`. */
      putSchema: (schema: FileSchemaPut) => Promise<unknown>;
      onError?: (e: Error) => void;
      /** Where the warnings of the file applied last go, for `graph` to report (section 11.3). */
      fileWarnings?: FileWarnings;
    },
  ) {}

  /** Applies a checked file: its schemas, then its entries. Warnings are logged each time it is applied. */
  async applyFile(file: LoadedRegistryFile): Promise<{ registered: string[]; removed: string[] }> {
    if (file.warnings.length > 0) this.deps.log.warn({ path: file.path, kind: file.kind, warnings: file.warnings.map(formatProblem) }, "registry file warnings");
    for (const schema of file.schemas) {
      try {
        await this.deps.putSchema(schema);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        throw new RegistryFileError(file.path, [`schema ${schema.name}:${schema.version}: ${why}`]);
      }
    }
    const applied = await this.apply(file.specs);
    if (this.deps.fileWarnings) this.deps.fileWarnings.current = file.warnings;
    return applied;
  }

  /** Applies a file's entries: registers new and changed ones, removes static entries no longer listed. */
  async apply(specs: AgentSpecInput[]): Promise<{ registered: string[]; removed: string[] }> {
    const wanted = new Map(specs.map((s) => [s.agent_type, JSON.stringify(s)]));
    const registered: string[] = [];
    const removed: string[] = [];
    for (const [agentType, text] of wanted) {
      const present = this.deps.view.get(agentType)?.instances.has(STATIC_INSTANCE_ID) ?? false;
      if (this.applied.get(agentType) === text && present) continue;
      await this.deps.registrar.register(agentType, { spec: JSON.parse(text) as unknown }, { static: true });
      this.applied.set(agentType, text);
      registered.push(agentType);
    }
    // Static entries in the store that the file no longer lists (also those of an earlier run).
    const stale = new Set<string>([...this.applied.keys()].filter((t) => !wanted.has(t)));
    for (const agent of this.deps.view.all()) {
      if (agent.instances.has(STATIC_INSTANCE_ID) && !wanted.has(agent.agent_type)) stale.add(agent.agent_type);
    }
    for (const agentType of stale) {
      try {
        await this.deps.registrar.deregisterInstance(agentType, STATIC_INSTANCE_ID, RemovalReason.Operator);
        removed.push(agentType);
      } catch (e) {
        if (!(e instanceof RegistryError && e.code === ErrorCode.UnknownInstance)) throw e;
      }
      this.applied.delete(agentType);
    }
    if (registered.length > 0 || removed.length > 0) this.deps.log.info({ registered, removed }, "registry file applied");
    return { registered, removed };
  }

  /** A changed file: applied when valid; otherwise reported, and the last good state stays. */
  async reload(path: string, text: string | null, readError: Error | null, options: MappingOptions = {}): Promise<void> {
    try {
      if (readError) throw new RegistryFileError(path, [`cannot be read: ${readError.message}`]);
      await this.applyFile(parseRegistryFile(path, text ?? "", options));
    } catch (e) {
      this.deps.log.error({ err: e, path }, "registry file not applied; keeping the last good state");
      this.deps.onError?.(e as Error);
    }
  }
}
