/**
 * The service's register path, run offline: the body is read as the register endpoint reads
 * it (registerMessage), its spec is taken out of whichever form it came in (specOfRegisterBody:
 * the A2A card and MCP tool spec imports), then judged by the AgentSpec rules with the same
 * schema checker (validateSpec). One path, shared with the service, so `validate` and
 * `register`'s check before sending cannot accept what the registry refuses, nor the reverse.
 *
 * Two things it cannot know: the deployment's subject rules (REGISTRY_SUBJECT_POLICY and the
 * prefix) and what the registry already holds (a `nats_subject` claimed by another agent type,
 * the spec stored under the same version).
 */
import { isRegistryError } from "../domain/errors.js";
import type { A2aVersion } from "../domain/interop/a2a/index.js";
import { specOfRegisterBody } from "../domain/interop/register-body.js";
import { SchemaChecker } from "../domain/spec/schema-check.js";
import { unknownSpecFields } from "../domain/spec/spec.js";
import { validateSpec } from "../domain/spec/validation.js";
import { parseMessage, registerMessage } from "../domain/messages.js";

export type SpecCheck = { ok: boolean; errors: string[]; warnings: string[]; summary: string };
export type RegistrationCheck = SpecCheck & { a2aVersion?: A2aVersion };

let checker: SchemaChecker | undefined;

/** Every problem of an error, one line each with its path (the CLI prints them all, the service the first 20). */
function problemsOf(e: unknown): string[] {
  if (!isRegistryError(e)) throw e;
  return (e.issues ?? [{ path: "", message: e.message }]).map((i) => `${i.path || "(root)"}: ${i.message}`);
}

/** The AgentSpec rules (PROTOCOL.md section 3) on a raw spec; unknown fields are warnings. */
export function checkSpec(value: unknown): SpecCheck {
  const warnings = unknownSpecFields(value).map((f) => `${f.replace(/^spec\./, "")}: not an AgentSpec field (the registry drops it)`);
  try {
    const { spec } = validateSpec(value, (checker ??= new SchemaChecker()), Number.POSITIVE_INFINITY);
    return { ok: true, errors: [], warnings, summary: `AgentSpec ${spec.agent_type} ${spec.version}` };
  } catch (e) {
    const errors = problemsOf(e);
    return { ok: false, errors, warnings, summary: `${errors.length} error(s)` };
  }
}

/**
 * A register body sent on `register.<agentType>`, judged as the service judges it. The card's
 * or tool spec's warnings (`a2a_card.<path>: ...`) come first, as in the registry's reply;
 * `invalid_request` and `invalid_card` issues are errors with their paths.
 */
export function checkRegistration(agentType: string | undefined, body: Readonly<Record<string, unknown>>): RegistrationCheck {
  let taken;
  try {
    // A spec that names no agent_type has no subject yet: its own validation says agent_type is missing.
    taken = specOfRegisterBody(agentType ?? "", parseMessage(registerMessage, body, "register"));
  } catch (e) {
    const errors = problemsOf(e);
    return { ok: false, errors, warnings: [], summary: `${errors.length} error(s)` };
  }
  const spec = checkSpec(taken.raw);
  return { ...spec, warnings: [...taken.warnings, ...spec.warnings], ...(taken.a2aVersion ? { a2aVersion: taken.a2aVersion } : {}) };
}
