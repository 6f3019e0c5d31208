/**
 * The spec rules issue 14 added (findings 10, 11, 12): a bounded weight, nats_subject and
 * consumer_group without control characters or NATS-owned subjects, and the rules that need
 * the configuration (the registry's own prefix, the subject policy); dependency names without
 * control or invisible formatting characters.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../../src/config/service.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { subjectIssues, subjectPolicyProblem } from "../../../../src/domain/spec/subject-rules.js";
import { MAX_WEIGHT, NATS_SUBJECT_RE, QUEUE_GROUP_RE, RESERVED_SUBJECT_RE } from "../../../../src/protocol/index.js";
import { UNSAFE_NAME_CHAR_RE } from "../../../../src/protocol/ids.js";

const base = {
  agent_type: "alpha",
  version: "1.0.0",
  description: "",
  owner_team: "t",
  capabilities: [{ name: "a.run", description: "", input_schema: {}, output_schema: {} }],
  nats_subject: "agent.tasks.alpha",
  consumer_group: "alpha",
};

const issuesOf = (extra: Record<string, unknown>) => {
  const r = agentSpecSchema.safeParse({ ...base, ...extra });
  return r.success ? [] : r.error.issues.map((i) => i.path.join("."));
};

describe("weight", () => {
  it(`is at most ${MAX_WEIGHT}`, () => {
    expect(issuesOf({ weight: MAX_WEIGHT })).toEqual([]);
    for (const weight of [MAX_WEIGHT + 0.5, 1e308, Number.MAX_VALUE]) expect(issuesOf({ weight })).toEqual(["weight"]);
    expect(issuesOf({ weight: 0 })).toEqual(["weight"]);
  });
});

describe("nats_subject and consumer_group characters", () => {
  const controls = ["\u0000", "\u0001", "\t", "\r", "\n", "\u001b", "\u007f", "\u0085", "\u009f", "\u2028"];

  it.each(controls.map((c) => [JSON.stringify(c), c]))("refuses %s in a subject and in a queue group", (_shown, ch) => {
    expect(NATS_SUBJECT_RE.test(`agent.ta${ch}sks`)).toBe(false);
    expect(QUEUE_GROUP_RE.test(`gr${ch}oup`)).toBe(false);
    expect(issuesOf({ nats_subject: `agent.${ch}` })).toEqual(["nats_subject"]);
    expect(issuesOf({ consumer_group: `g${ch}` })).toEqual(["consumer_group"]);
  });

  it("keeps accepting printable ASCII and UTF-8", () => {
    for (const s of ["agent.tasks.alpha", "a-b_c.d~e", "tâches.résumé", "漢字.タスク", "agent.$x", "x._INBOX"]) expect(issuesOf({ nats_subject: s }), s).toEqual([]);
  });

  it("refuses subjects NATS owns: $-subjects and reply inboxes", () => {
    for (const s of ["$KV.agent-registry.agents.x", "$JS.API.INFO", "$SYS.REQ.SERVER.PING", "$SRV.PING", "$G", "_INBOX.x.y", "_INBOX", "_INBOX_coordinator.abc"]) {
      expect(RESERVED_SUBJECT_RE.test(s), s).toBe(true);
      expect(issuesOf({ nats_subject: s }), s).toEqual(["nats_subject"]);
    }
    expect(RESERVED_SUBJECT_RE.test("_INBOXES.x")).toBe(false);
  });
});

describe("dependency names", () => {
  const dependsOn = (name: string) => ({ depends: [{ type: "tool", name, version: "1.0.0" }] });
  // C0, DEL, C1, the separators, bidi marks, embeddings, overrides and isolates, zero-width characters, the BOM.
  const unsafe = ["\u0000", "\u0009", "\u000a", "\u001b", "\u007f", "\u0085", "\u009f", "\u061c", "\u200b", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029", "\u202a", "\u202e", "\u2060", "\u2066", "\u2067", "\u2068", "\u2069", "\ufeff"];

  it.each(unsafe.map((c) => [JSON.stringify(c), c]))("refuses %s, naming the field and the character", (_shown, ch) => {
    expect(UNSAFE_NAME_CHAR_RE.test(`fe${ch}tch`)).toBe(true);
    const r = agentSpecSchema.safeParse({ ...base, ...dependsOn(`fe${ch}tch`) });
    expect(r.success).toBe(false);
    const code = `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    expect(r.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([["depends.0.name", `holds ${code} at 2: control characters and invisible formatting characters (bidi, zero-width) are not allowed`]]);
  });

  it("keeps accepting printable names, UTF-8 and right-to-left letters included", () => {
    for (const name of ["fetch", "dep.fetch", "read_and_file", "@scope/pkg", "résumé", "漢字", "שלום", "مرحبا", "a b"]) expect(issuesOf(dependsOn(name)), name).toEqual([]);
  });
});

describe("subjectIssues", () => {
  it("refuses the registry's own prefix and what lies under it", () => {
    for (const s of ["registry", "registry.register.victim", "registry.tenant.acme.lookup"]) {
      expect(subjectIssues("alpha", s, { prefix: "registry" })).toEqual([{ path: "nats_subject", message: "must not be under the registry's own prefix registry" }]);
    }
    expect(subjectIssues("alpha", "registry-tasks.alpha", { prefix: "registry" })).toEqual([]);
    expect(subjectIssues("alpha", "acme.registry.x", { prefix: "acme.registry" })).toHaveLength(1);
  });

  it("holds a subject to the policy, with {agent_type} filled in", () => {
    const rules = { prefix: "registry", subjectPolicy: "agent.tasks.{agent_type}" };
    expect(subjectIssues("alpha", "agent.tasks.alpha", rules)).toEqual([]);
    expect(subjectIssues("alpha", "agent.tasks.beta", rules)).toEqual([
      { path: "nats_subject", message: "must be agent.tasks.alpha (subject policy agent.tasks.{agent_type})" },
    ]);
    expect(subjectIssues("alpha", "agent.tasks.alpha.v2", rules)).toHaveLength(1);
    const under = { prefix: "registry", subjectPolicy: "agent.{agent_type}.>" };
    expect(subjectIssues("alpha", "agent.alpha", under)).toEqual([]);
    expect(subjectIssues("alpha", "agent.alpha.v2.fast", under)).toEqual([]);
    expect(subjectIssues("alpha", "agent.alphabet", under)).toHaveLength(1);
  });

  it("checks the policy itself when the configuration is loaded", () => {
    expect(subjectPolicyProblem("agent.tasks.{agent_type}")).toBeNull();
    expect(subjectPolicyProblem("agent.tasks")).toMatch(/must contain \{agent_type\}/);
    expect(subjectPolicyProblem("agent.*.{agent_type}")).toMatch(/must be a NATS subject/);
    expect(loadConfig({ REGISTRY_SUBJECT_POLICY: "agent.tasks.{agent_type}" }).subjectPolicy).toBe("agent.tasks.{agent_type}");
    expect(loadConfig({}).subjectPolicy).toBeUndefined();
    expect(() => loadConfig({ REGISTRY_SUBJECT_POLICY: "agent.tasks" })).toThrow(ConfigError);
  });
});
