/**
 * A registry file read offline into a view of its own, as the service would hold it once the
 * file is loaded: every entry registered with its one `static` instance, ready (file entries
 * never expire). What `sbom export --file` writes the SBOM from, without a registry running.
 */
import { checkAnyRegistryFile } from "../domain/spec/registry-v2/index.js";
import { agentSpecSchema } from "../domain/spec/spec.js";
import { STATIC_INSTANCE_ID } from "../domain/model/model.js";
import { agentKey, encodeRecord, instanceKey, type AgentRecord, type InstanceRecord } from "../domain/model/records.js";
import { RegistryView } from "../domain/view/view.js";
import { describeIssues, toIssues } from "../domain/spec/validation.js";
import { loadDocument } from "./registration-document.js";

export type FileFleet = { ok: true; view: RegistryView } | { ok: false; errors: string[] };

export function loadFileFleet(path: string, now = Date.now()): FileFleet {
  const doc = loadDocument(path);
  if (!doc.ok) return doc;
  // Any kind of registry file (today's agents list, Registry v2 or v1); a v2 file's schemas are
  // not needed for an SBOM: the entries keep their refs.
  const file = checkAnyRegistryFile(doc.value);
  if (!file.ok) return { ok: false, errors: file.errors };
  const view = new RegistryView({ now: () => now });
  const errors: string[] = [];
  let revision = 0;
  file.specs.forEach((input, i) => {
    const parsed = agentSpecSchema.safeParse(input);
    if (!parsed.success) {
      errors.push(`agents.${i}: ${describeIssues(toIssues(parsed.error))}`);
      return;
    }
    const spec = parsed.data;
    const put = (key: string, value: AgentRecord | InstanceRecord) => view.apply({ key, revision: ++revision, operation: "PUT", value: encodeRecord(value), created: now });
    put(agentKey(spec.agent_type), { kind: "agent", spec, registered_at: now, updated_at: now, static: true });
    put(instanceKey(spec.agent_type, STATIC_INSTANCE_ID), {
      kind: "instance", version: spec.version, status: "ready", registered_at: now, last_heartbeat: now,
      heartbeat_interval_ms: 0, active_tasks: 0, metadata: {}, spec_changed: false,
    });
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, view };
}
