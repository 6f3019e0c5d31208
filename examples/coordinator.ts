/**
 * A coordinator: asks the registry who provides `text.summarize`, sends the task to that
 * agent's NATS subject by request/reply, and prints the answer.
 *
 *   npx tsx examples/coordinator.ts "Some long text. With sentences. More of them."
 *
 * Settings from the environment: NATS_URL, REGISTRY_PREFIX, REGISTRY_TENANT and the NATS
 * credentials, as for examples/agent.ts.
 */
import { connect, connectOptionsFromEnv, RegistryClient } from "../src/client/index.js";

const text =
  process.argv[2] ??
  "NATS is a messaging system. The registry keeps track of agents. Coordinators look capabilities up. Agents answer tasks.";

// A one-shot script: fail fast rather than reconnect forever as an agent would.
const nc = await connect(connectOptionsFromEnv(process.env, { name: "example-coordinator", overrides: { maxReconnectAttempts: 0 } })).catch((e: unknown) => {
  console.error(`error: cannot connect to NATS: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
try {
  const registry = new RegistryClient(nc, { prefix: process.env["REGISTRY_PREFIX"] || undefined, tenant: process.env["REGISTRY_TENANT"] || undefined });
  const { providers, revision } = await registry.lookup("text.summarize");
  const provider = providers[0];
  if (!provider) {
    console.error("no ready provider of text.summarize (is examples/agent.ts running?)");
    process.exitCode = 1;
  } else {
    console.log(`provider: ${provider.agent_type} ${provider.version} on ${provider.nats_subject} (registry revision ${revision})`);
    // The request goes to the agent, not to the registry: the registry only says where to send it.
    const reply = await nc.request(provider.nats_subject, JSON.stringify({ text, max_sentences: 2 }), { timeout: 10_000 });
    const answer = reply.json<{ summary?: string; error?: string }>();
    if (answer.error !== undefined) {
      console.error(`the agent refused the task: ${answer.error}`);
      process.exitCode = 1;
    } else console.log(`answer: ${answer.summary}`);
  }
} catch (e) {
  console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await nc.close();
}
