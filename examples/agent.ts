/**
 * A working agent: offers `text.summarize`, answers tasks sent to its NATS subject (queue
 * group, so replicas share the work), keeps itself registered, and leaves cleanly on SIGTERM.
 *
 *   npx tsx examples/agent.ts
 *
 * Settings from the environment: NATS_URL (default nats://127.0.0.1:4222), REGISTRY_PREFIX
 * (default registry), INSTANCE_ID, and the NATS credentials NATS_USER/NATS_PASSWORD,
 * NATS_TOKEN, NATS_CREDS, NATS_NKEY_SEED_FILE, NATS_TLS_*, NATS_INBOX_PREFIX.
 *
 * Inside the project the SDK is imported from src/; an application imports "agent-registry/client".
 */
import { connect, connectOptionsFromEnv, installShutdownHandlers, registerAgent, type AgentHandle, type AgentSpecInput } from "../src/client/index.js";

const spec: AgentSpecInput = {
  agent_type: "summarizer",
  version: "1.0.0",
  description: "Summarises English text by keeping its first sentences.",
  owner_team: "examples",
  capabilities: [
    {
      name: "text.summarize",
      description: "Short summary of a text",
      input_schema: {
        type: "object",
        properties: { text: { type: "string" }, max_sentences: { type: "integer", minimum: 1 } },
        required: ["text"],
      },
      output_schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
      confidence_hint: 0.6,
      tags: ["english", "fast"],
      examples: ["summarize this article in two sentences"],
    },
  ],
  nats_subject: "agents.summarizer.tasks",
  consumer_group: "summarizer",
  max_concurrent_tasks: 4,
  runtime: "node",
};

type Task = { text?: unknown; max_sentences?: unknown };

function summarize(task: Task): { summary: string } {
  if (typeof task.text !== "string") throw new Error("text must be a string");
  const max = typeof task.max_sentences === "number" && task.max_sentences >= 1 ? task.max_sentences : 2;
  const sentences = task.text.match(/[^.!?]+[.!?]*/g) ?? [];
  return { summary: sentences.slice(0, max).join("").trim() };
}

const log = (...args: unknown[]) => console.log(new Date().toISOString(), ...args);

const nc = await connect(connectOptionsFromEnv(process.env, { name: "summarizer-agent" }));

// Serve before registering: once the registry routes to us, tasks must find a listener.
const agent: { handle?: AgentHandle } = {};
let active = 0;
const sub = nc.subscribe(spec.nats_subject, { queue: spec.consumer_group });
void (async () => {
  for await (const msg of sub) {
    active++;
    agent.handle?.setActiveTasks(active);
    try {
      msg.respond(JSON.stringify(summarize(msg.json<Task>())));
    } catch (e) {
      msg.respond(JSON.stringify({ error: e instanceof Error ? e.message : String(e) }));
    } finally {
      active--;
      agent.handle?.setActiveTasks(active);
    }
  }
})();

// Registration retries by itself while the registry is down; it throws only for a bad spec.
const handle = await registerAgent(nc, spec, {
  prefix: process.env["REGISTRY_PREFIX"] || undefined,
  instanceId: process.env["INSTANCE_ID"] || undefined,
  onEvent: (e) => {
    if (e.type === "registered" || e.type === "reregistered") log(`${e.type} as ${e.reply.instance_id}, heartbeat every ${e.reply.heartbeat_interval_ms} ms`);
    else if (e.type === "error" || e.type === "heartbeat_failed") log(`${e.type}:`, e.error instanceof Error ? e.error.message : e.error);
    else log(e.type);
  },
});
agent.handle = handle;
log(`serving text.summarize on ${spec.nats_subject} (queue ${spec.consumer_group}); Ctrl-C or SIGTERM to stop`);

// SIGTERM/Ctrl-C: stop being routed, deregister, finish in-flight tasks, exit.
installShutdownHandlers(handle, { beforeExit: () => nc.drain() });
