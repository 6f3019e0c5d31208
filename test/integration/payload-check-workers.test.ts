/**
 * Payload checks off the event loop (adversarial review, high severity): a capability whose
 * input schema has a pattern like `(?:\p{L}|\p{N}){1000}` is matched by RE2 in time linear in
 * the input but times the size of the pattern's program, so one `check` of a 240 KB string
 * held the registry's event loop for 4.3 s; three at once queued to 13 s and every other
 * request waited behind them. `tasks_delegate` (MCP) checks through the same op.
 *
 * The registry runs in this process, so its event loop is this one: the bystander lookups and
 * the loop delay (perf_hooks) measure it directly while hostile checks keep coming. Asserted,
 * by order rather than by time (the machine may be busy): bystander lookups are answered while
 * a hostile check is still running, which a check on the event loop would not let happen, and
 * every hostile check is answered with a structured refusal (429 `limit_exceeded` for a check that ran past its budget, 503
 * `unavailable` for one that found the check queue full or waited past its time) or a correct
 * verdict. The figures (latencies, loop delay) are printed, not asserted.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { call, mcpOverStdio, type McpConnection } from "../harness/mcp.js";

/** What the test configures: one check worker, two checks waiting at most, the default 1 s per check. */
const BUDGET_MS = 1_000;
const WORKERS = 1;
const QUEUE = 2;
/**
 * How long the hostile checks keep coming, how many are in flight at once (more than the one
 * running and the two waiting), and how long an attacker refused with 503 waits before it
 * sends again: the pool stays full, while a flood of refused 240 KB bodies, which cost their
 * parse on the loop as large bodies do on any endpoint, is flood.test.ts's subject.
 */
const ATTACK_MS = 3_000;
const ATTACKERS = 4;
const RETRY_AFTER_503_MS = 50;
/**
 * Bystander lookups answered while one hostile check was in flight, at least: a check run on
 * the event loop holds every other answer until it ends, so there would be none (before the
 * change one check held the loop for 4.3 s).
 */
const LOOKUPS_DURING_A_CHECK = 5;

const COSTLY = { type: "object", properties: { text: { type: "string", pattern: "(?:\\p{L}|\\p{N}){1000}" } } };
/** 240,000 characters in which no run of 1,000 letters ever completes: RE2 tries at every offset. */
const HOSTILE_TEXT = ("a".repeat(999) + "!").repeat(240);

let server: NatsTestServer;
let registry: TestRegistry;
let raw: RawClient;
let bystander: RawClient;
let prefix: string;

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url, { payloadCheckWorkers: WORKERS, payloadCheckQueue: QUEUE, payloadCheckTimeoutMs: BUDGET_MS });
  prefix = configOf(registry).prefix;
  raw = await RawClient.connect(server.url, prefix);
  bystander = await RawClient.connect(server.url, prefix);
  let revision = 0;
  for (const [agentType, input] of [["costly", COSTLY], ["steady", { type: "object" }]] as const) {
    const r = await raw.request(`register.${agentType}`, {
      spec: spec(agentType, { capabilities: [{ name: `${agentType}.run`, description: `runs ${agentType}`, input_schema: input, output_schema: {} }] }),
      status: "ready",
      heartbeat_interval_ms: 3_600_000,
    });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    revision = r.body.revision;
  }
  // Read your writes: the checks below find both capabilities (a min_revision of 1 waited for nothing).
  await bystander.request("lookup", { capability: "steady.run", min_revision: revision });
  // A worker loaded before the measures (from source it takes a while): the attack pays replacements only.
  const warm = await raw.request("check", { capability: "costly.run", payload: { text: "x" } }, 30_000);
  expect(warm.body).toMatchObject({ valid: false });
}, 60_000);

afterAll(async () => {
  await raw?.close();
  await bystander?.close();
  await registry?.stop();
  await server?.stop();
});

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

/**
 * Sequential lookups of a capability nobody attacks, until `done`; each one's latency (a
 * lookup not answered counts its wait). A closed loop: a stall of the registry's loop is one
 * slow sample, not one per lookup that would have been sent meanwhile, which is why the loop
 * delay is printed beside it.
 */
async function bystanderLookups(done: Promise<unknown>): Promise<{ ms: number[]; at: number[]; failed: string[] }> {
  const ms: number[] = [];
  const at: number[] = [];
  const failed: string[] = [];
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    const started = performance.now();
    const r = await bystander.request("lookup", { capability: "steady.run" }, 30_000).catch((e: unknown) => e as Error);
    ms.push(performance.now() - started);
    at.push(performance.now());
    if (r instanceof Error || !(r.ok && r.body.providers.length === 1)) failed.push(r instanceof Error ? r.message : JSON.stringify(r.body));
  }
  return { ms, at, failed };
}

/** A hostile check's outcome, how long it took, and when (performance.now()) it was sent and answered. */
type Answer = { outcome: string; ms: number; sentAt: number; answeredAt: number };

/** `ATTACKERS` closed loops sending `send()` for ATTACK_MS; each answer's outcome and time. */
async function attack(send: () => Promise<string>): Promise<Answer[]> {
  const answers: Answer[] = [];
  const until = Date.now() + ATTACK_MS;
  await Promise.all(
    Array.from({ length: ATTACKERS }, async () => {
      while (Date.now() < until) {
        const started = performance.now();
        const outcome = await send();
        const answeredAt = performance.now();
        answers.push({ outcome, ms: answeredAt - started, sentAt: started, answeredAt });
        if (outcome.includes("unavailable")) await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_503_MS));
      }
    }),
  );
  return answers;
}

/** Runs the attack (none: a quiet second, for comparison) while bystanders look up; prints and returns what was measured. */
async function measure(label: string, send: (() => Promise<string>) | null): Promise<{ answers: Answer[]; lookups: number[]; lookupsAt: number[]; failed: string[] }> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const attacking = send ? attack(send) : new Promise<Answer[]>((resolve) => setTimeout(() => resolve([]), 1_000));
  const { ms: lookups, at: lookupsAt, failed } = await bystanderLookups(attacking);
  const answers = await attacking;
  loop.disable();
  const byOutcome = new Map<string, number[]>();
  for (const a of answers) byOutcome.set(a.outcome, [...(byOutcome.get(a.outcome) ?? []), a.ms]);
  const outcomes = [...byOutcome].map(([o, t]) => `${o} x${t.length} (max ${ms(Math.max(...t))})`).join(", ");
  console.log(
    (send ? `[${label}] ${answers.length} hostile answers in ${ATTACK_MS} ms: ${outcomes}\n` : "") +
      `[${label}] bystander lookups: ${lookups.length} (${failed.length} not answered), p50 ${ms(pct(lookups, 50))}, p99 ${ms(pct(lookups, 99))}, max ${ms(Math.max(...lookups))}\n` +
      `[${label}] event loop delay: p50 ${ms(loop.percentile(50) / 1e6)}, p99 ${ms(loop.percentile(99) / 1e6)}, max ${ms(loop.max / 1e6)}`,
  );
  return { answers, lookups, lookupsAt, failed };
}

function expectHeldOff(label: string, { answers, lookups, lookupsAt, failed }: { answers: Answer[]; lookups: number[]; lookupsAt: number[]; failed: string[] }, refusals: readonly string[], verdict: string): void {
  expect(failed, `${label}: bystander lookups not answered`).toEqual([]);
  expect(lookups.length, `${label}: bystander lookups`).toBeGreaterThanOrEqual(50);
  for (const a of answers) expect([...refusals, verdict], `${label}: hostile outcome`).toContain(a.outcome);
  // The budget was applied: checks were stopped, not run to their end.
  const stopped = answers.filter((a) => a.outcome === refusals[0]);
  expect(stopped.length, `${label}: a check stopped at its budget`).toBeGreaterThan(0);
  // The loop stayed free while a check ran: lookups were answered between its sending and its answer.
  const answeredDuring = (a: Answer) => lookupsAt.filter((t) => t > a.sentAt && t < a.answeredAt).length;
  expect(Math.max(...stopped.map(answeredDuring)), `${label}: bystander lookups answered while one check ran`).toBeGreaterThanOrEqual(LOOKUPS_DURING_A_CHECK);
}

describe("hostile payload checks", () => {
  it("registry.check: bystander lookups stay fast, hostile checks are stopped at their budget or refused", async () => {
    const body = new TextEncoder().encode(JSON.stringify({ capability: "costly.run", payload: { text: HOSTILE_TEXT } }));
    await measure("quiet", null);
    const lostBefore = (await registry.metrics.registry.getSingleMetric("agent_registry_payload_check_workers_lost_total")?.get())?.values ?? [];
    const measured = await measure("check", async () => {
      const r = await raw.request("check", body, 60_000).catch((e: unknown) => ({ ok: false, status: 0, body: { error: { code: String(e) } } }));
      if (r.ok) return r.body.valid === false && r.body.errors[0]?.path === "payload.text" ? "invalid" : `wrong verdict ${JSON.stringify(r.body)}`;
      return `${r.status} ${r.body.error.code}`;
    });
    expectHeldOff("check", measured, ["429 limit_exceeded", "503 unavailable"], "invalid");
    const lost = (await registry.metrics.registry.getSingleMetric("agent_registry_payload_check_workers_lost_total")?.get())?.values ?? [];
    const timeouts = (values: typeof lost) => values.filter((v) => v.labels["reason"] === "timeout").reduce((s, v) => s + v.value, 0);
    expect(timeouts(lost) - timeouts(lostBefore)).toBe(measured.answers.filter((a) => a.outcome === "429 limit_exceeded").length);
  }, 120_000);

  it("answers correct verdicts against the costly schema once the attack is over", async () => {
    const valid = await raw.request("check", { capability: "costly.run", payload: { text: "é".repeat(500) + "7".repeat(500) } }, 30_000);
    expect(valid.body).toMatchObject({ valid: true, agent_type: "costly" });
    const invalid = await raw.request("check", { capability: "costly.run", payload: { text: "a".repeat(99) + "!" } }, 30_000);
    expect(invalid.body).toMatchObject({ valid: false, errors: [{ path: "payload.text" }] });
  });

  describe("tasks_delegate through agent-registry mcp", () => {
    let mcp: McpConnection;
    let delivered = 0;

    beforeAll(async () => {
      const agent = await RawClient.connect(server.url, prefix);
      agent.nc.subscribe("agent.tasks.costly", {
        callback: (_e, m) => {
          delivered++;
          m.respond(JSON.stringify({ done: true }));
        },
      });
      await agent.nc.flush();
      mcp = await mcpOverStdio(["--nats", server.url, "--prefix", prefix, "--enable-delegate"]);
      return async () => {
        await mcp?.close();
        await agent.close();
      };
    }, 60_000);

    it("bystander lookups stay fast, hostile delegations are refused with the registry's code and never delivered", async () => {
      const measured = await measure("tasks_delegate", async () => {
        const r = await call(mcp.client, "tasks_delegate", { capability: "costly.run", payload: { text: HOSTILE_TEXT } }).catch((e: unknown) => ({ isError: true, body: { error: { code: String(e) } } }));
        return r.isError ? String(r.body.error.code) : "delivered";
      });
      expectHeldOff("tasks_delegate", measured, ["limit_exceeded", "unavailable"], "invalid_payload");
      expect(delivered).toBe(0);
      // And an honest delegation still goes through.
      const ok = await call(mcp.client, "tasks_delegate", { capability: "costly.run", payload: { text: "b".repeat(1000) } });
      expect(ok).toMatchObject({ isError: false, body: { agent_type: "costly", reply: { done: true } } });
    }, 120_000);
  });
});
