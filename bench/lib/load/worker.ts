/**
 * The load process. The bench runner forks it and sends it commands over the IPC channel;
 * it holds the NATS connection and the simulated fleet, so the runner stays idle while a
 * scenario measures, and the registry never shares an event loop with its load.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "../../../src/client/connection.js";
import { subjects } from "../../../src/protocol/subjects.js";
import { agentTypeName, capabilityCount, capabilityName, cardAgentTypeName, cardInput, type FleetShape } from "../specs.js";
import { closedLoop } from "./closed-loop.js";
import { EventProbe, evictionReport, readDeregistered } from "./events.js";
import { Fleet } from "./fleet.js";
import { enc, replyError, requestOk } from "./requests.js";
import { seedBucket } from "./seed.js";
import { kvWriteBaseline } from "./kv-baseline.js";
import { bucketSequence, readBucketBare } from "./bucket.js";
import { regionCommands } from "./regions.js";

type Args = Record<string, any>;

let nc: NatsConnection | null = null;
let fleet: Fleet | null = null;
let probe: EventProbe | null = null;

const conn = (): NatsConnection => {
  if (!nc) throw new Error("not connected");
  return nc;
};
const theFleet = (): Fleet => {
  if (!fleet) throw new Error("no fleet");
  return fleet;
};

/** Lookup bodies for random capabilities of the fleet, encoded once. */
function lookupBodies(shape: FleetShape, n = 4096): Uint8Array[] {
  const total = capabilityCount(shape);
  return Array.from({ length: n }, () => enc.encode(JSON.stringify({ capability: capabilityName(Math.floor(Math.random() * total)) })));
}

const commands: Record<string, (a: Args) => Promise<unknown> | unknown> = {
  async connect(a) {
    nc = await connect({ servers: a["url"], name: "bench-load", overrides: { maxReconnectAttempts: 10 } });
    return { server: nc.info?.version };
  },

  /** Creates the fleet's instance table; `register` then registers it. */
  fleet(a) {
    fleet = new Fleet(conn(), { shape: a["shape"], instancesPerType: a["instancesPerType"], intervalMs: a["intervalMs"], prefix: a["prefix"] ?? "registry" });
    return { size: fleet.size };
  },
  register: (a) => theFleet().registerAll(a["concurrency"] ?? 64),
  assumeRegistered: () => theFleet().assumeRegistered(),
  startHeartbeats: () => theFleet().startHeartbeats(),
  stopHeartbeats: () => theFleet().stopHeartbeats(),
  beginWindow: () => theFleet().beginWindow(),
  endWindow: () => theFleet().endWindow(),
  stopEvery: (a) => theFleet().stopEvery(a["every"]),

  /** Sizes of lookup replies, and one of median size for the baseline to send back. */
  async sampleLookups(a) {
    const subject = subjects(a["prefix"] ?? "registry").query("lookup");
    const sizes: Array<{ size: number; text: string }> = [];
    for (const body of lookupBodies(a["shape"], 200)) {
      const msg = await conn().request(subject, body, { timeout: 10_000 });
      sizes.push({ size: msg.data.length, text: msg.string() });
    }
    sizes.sort((x, y) => x.size - y.size);
    const median = sizes[Math.floor(sizes.length / 2)]!;
    const mean = sizes.reduce((s, x) => s + x.size, 0) / sizes.length;
    return { meanBytes: Math.round(mean), medianBytes: median.size, median: median.text };
  },

  /** Closed-loop lookups (or the baseline's) at `concurrency` in flight for `durationMs`. */
  lookups(a) {
    const bodies = lookupBodies(a["shape"]);
    const subject: string = a["subject"];
    return closedLoop(a["concurrency"], a["durationMs"], () => requestOk(conn(), subject, bodies[Math.floor(Math.random() * bodies.length)]!));
  },

  /** Closed-loop requests of one body to one subject (a query op), at `concurrency` in flight. */
  requests(a) {
    const body = enc.encode(JSON.stringify(a["body"]));
    return closedLoop(a["concurrency"], a["durationMs"], () => requestOk(conn(), a["subject"], body, 30_000));
  },

  /** One request, its reply parsed (a schema put before a v2 fleet registers). */
  async request(a) {
    const msg = await conn().request(a["subject"], enc.encode(JSON.stringify(a["body"])), { timeout: 10_000 });
    return { error: replyError(msg), body: msg.data.length > 0 ? msg.json() : null };
  },

  /** Registrations of new instances of the fleet's agent types at `concurrency` in flight. */
  registrations(a) {
    const f = theFleet();
    const types = f.opts.shape.types;
    const prefix = subjects(f.opts.prefix);
    let n = 0;
    return closedLoop(a["concurrency"], a["durationMs"], () => {
      const k = n++;
      const t = k % types;
      return requestOk(conn(), prefix.register(agentTypeName(t)), f.registerBody(t, `r${a["round"] ?? 0}x${k}`, a["intervalMs"]));
    });
  },

  /**
   * Registrations with an A2A card instead of a spec (PROTOCOL.md section 10.1), of the card
   * agent types 0..types-1 in turn, at `concurrency` in flight: each body carries the whole
   * card, which the registry checks against its A2A schema, maps and validates every time.
   */
  cardRegistrations(a) {
    const f = theFleet();
    const types = f.opts.shape.types;
    const prefix = subjects(f.opts.prefix);
    const cards = Array.from({ length: types }, (_, t) => JSON.stringify(cardInput(t, f.opts.shape)));
    let n = 0;
    return closedLoop(a["concurrency"], a["durationMs"], () => {
      const k = n++;
      const t = k % types;
      const body = `{"instance_id":"c${a["round"] ?? 0}x${k}","heartbeat_interval_ms":${a["intervalMs"]},"nats_subject":"agent.tasks.${cardAgentTypeName(t)}","a2a_card":${cards[t]}}`;
      return requestOk(conn(), prefix.register(cardAgentTypeName(t)), enc.encode(body));
    });
  },

  async startProbe(a) {
    probe = new EventProbe(conn(), theFleet());
    await probe.start(a["stream"] ?? "REGISTRY_EVENTS", a["ratePerSec"], a["intervalMs"]);
  },
  endProbe: (a) => {
    if (!probe) throw new Error("no probe");
    return probe.end(a["graceMs"] ?? 5_000);
  },

  async evictions(a) {
    const events = await readDeregistered(conn(), a["stream"] ?? "REGISTRY_EVENTS", theFleet().opts.prefix);
    return evictionReport(events, theFleet(), a["missed"] ?? 3);
  },

  /**
   * Heartbeats for `count` instance ids the registry never held, sent together: each must be
   * answered 404 unknown_instance (the agent's cue to register again), whatever else is loaded.
   * Counts the answers by error code ("ok" for none, the message's first word for a timeout).
   */
  async unknownHeartbeats(a) {
    const prefix = subjects(theFleet().opts.prefix);
    const types = theFleet().opts.shape.types;
    const errors = await Promise.all(
      Array.from({ length: a["count"] as number }, (_, k) => requestOk(conn(), prefix.heartbeat(agentTypeName(k % types), `never${k}`), enc.encode("{}"))),
    );
    const answers: Record<string, number> = {};
    for (const error of errors) {
      const code = error?.split(" ")[0] ?? "ok";
      answers[code] = (answers[code] ?? 0) + 1;
    }
    return answers;
  },

  bucketSequence: (a) => bucketSequence(conn(), a["bucket"] ?? "agent-registry"),
  readBucketBare: (a) => readBucketBare(conn(), a["bucket"] ?? "agent-registry"),
  kvWriteBaseline: (a) => kvWriteBaseline(conn(), { bucket: a["bucket"], keys: a["keys"], ratePerSec: a["ratePerSec"], durationMs: a["durationMs"] }),
  seedBucket: (a) => seedBucket(conn(), a["bucket"] ?? "agent-registry", a["shape"], a["instancesPerType"], a["intervalMs"]),
  /** The regions benchmark's commands (bench/lib/load/regions.ts): a second connection to another region. */
  ...regionCommands(conn),

  async close() {
    fleet?.close();
    await commands["regionsClose"]?.({});
    await nc?.drain();
    nc = null;
  },
};

process.on("message", (m: { id: number; cmd: string; args: Args }) => {
  const run = async (): Promise<unknown> => {
    const command = commands[m.cmd];
    if (!command) throw new Error(`unknown command ${m.cmd}`);
    return command(m.args);
  };
  run().then(
    (result) => process.send?.({ id: m.id, ok: true, result: result ?? null }),
    (e: unknown) => process.send?.({ id: m.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  );
});

// The runner going away (even by kill -9) must not leave a load process behind.
process.on("disconnect", () => process.exit(0));
