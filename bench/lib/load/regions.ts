/**
 * The load process's part of the regions benchmark (bench/scenarios/regions.ts). A load process
 * lives in one region (its main connection, "home") and holds a second connection to the other
 * region ("peer"), so a write made at home and its appearance in the peer region are timed on
 * one clock. Polls are back-to-back requests to the peer region, the same for the registry and
 * for the bare mirror, so their resolution (one round trip, well under a millisecond on
 * loopback) is the same on both sides of the ratio.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { DiscardPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect } from "../../../src/client/connection.js";
import { inRegion } from "../../../src/adapters/nats/region-streams.js";
import { subjects } from "../../../src/protocol/subjects.js";
import { sleep } from "../processes.js";
import { Recorder } from "../stats.js";
import { roundSummary } from "./closed-loop.js";
import { enc, requestOk } from "./requests.js";

const SUBJ = subjects("registry");
/** The bare baseline: a stream in the home region and its mirror in the peer region. */
const BARE_STREAM = "BENCH_XR";
const BARE_MIRROR = "BENCH_XR_MIRROR";
const BARE_SUBJECT = "bench.xr";
/** Probes' instances ask for the longest interval the registry takes: none is evicted during the run. */
const PROBE_INTERVAL_MS = 3_600_000;

type Seen = { present: boolean; stale: boolean };

/** A one-capability spec whose capability names its agent type: a lookup of it finds this agent alone. */
function probeSpec(agentType: string): object {
  return {
    agent_type: agentType,
    version: "1.0.0",
    description: `Cross-region probe ${agentType}`,
    owner_team: "bench",
    capabilities: [{ name: `${agentType}.probe`, description: "answers the regions benchmark", input_schema: { type: "object" }, output_schema: {} }],
    nats_subject: `agent.tasks.${agentType}`,
    consumer_group: agentType,
  };
}

const registerBody = (agentType: string, instanceId: string): Uint8Array =>
  enc.encode(JSON.stringify({ instance_id: instanceId, heartbeat_interval_ms: PROBE_INTERVAL_MS, spec: probeSpec(agentType) }));

export class RegionsLoad {
  private peerConn: NatsConnection | null = null;
  private peerJsm: JetStreamManager | null = null;
  private homeJsm: JetStreamManager | null = null;

  constructor(private readonly home: () => NatsConnection) {}

  private peer(): { nc: NatsConnection; jsm: JetStreamManager } {
    if (!this.peerConn || !this.peerJsm) throw new Error("no connection to the peer region");
    return { nc: this.peerConn, jsm: this.peerJsm };
  }

  async connectPeer(url: string): Promise<void> {
    this.peerConn = await connect({ servers: url, name: "bench-load-peer", overrides: { maxReconnectAttempts: -1, reconnectTimeWait: 100 } });
    // Made now, and without the account check: while the WAN is cut neither side has a JetStream
    // meta leader, and only the streams' own servers answer.
    this.peerJsm = await jetstreamManager(this.peerConn, { timeout: 30_000, checkAPI: false });
    this.homeJsm = await jetstreamManager(this.home(), { timeout: 30_000, checkAPI: false });
  }

  async close(): Promise<void> {
    await this.peerConn?.drain().catch(() => undefined);
    this.peerConn = null;
  }

  /** Registers one probe agent at home; throws on a refusal (the run measures nothing then). */
  async register(agentType: string, instanceId = "p"): Promise<void> {
    const error = await requestOk(this.home(), SUBJ.register(agentType), registerBody(agentType, instanceId), 30_000);
    if (error !== null) throw new Error(`registering ${agentType} failed: ${error}`);
  }

  /** What the peer region's registry answers for the probe agent of `region`, scope global. */
  async seenInPeer(agentType: string, region: string): Promise<Seen> {
    try {
      const msg = await this.peer().nc.request(SUBJ.query("lookup"), enc.encode(JSON.stringify({ capability: `${agentType}.probe`, scope: "global" })), { timeout: 2_000 });
      const body = msg.json<{ providers?: Array<{ agent_type: string; region?: string; stale?: boolean }> }>();
      const p = body.providers?.find((x) => x.agent_type === agentType && x.region === region);
      return { present: p !== undefined, stale: p?.stale === true };
    } catch {
      // A request that fails (the region is cut off, a reply timed out) sees nothing yet.
      return { present: false, stale: false };
    }
  }

  /**
   * The ready instances of each agent type in this region's own answer (scope local) and in the
   * peer region's view of this region (scope global, this region's entry): the pairs that differ.
   */
  async compareViews(a: { agentTypes: string[]; region: string }): Promise<Array<{ agentType: string; home: number | null; peer: number | null }>> {
    const ready = async (nc: NatsConnection, agentType: string, scope: string): Promise<number | null> => {
      const msg = await nc.request(SUBJ.query("lookup"), enc.encode(JSON.stringify({ capability: `${agentType}.probe`, scope })), { timeout: 10_000 });
      const body = msg.json<{ providers?: Array<{ agent_type: string; region?: string; ready_instances?: number }> }>();
      return body.providers?.find((x) => x.agent_type === agentType && x.region === a.region)?.ready_instances ?? null;
    };
    const differ = [];
    for (const agentType of a.agentTypes) {
      const [home, peer] = [await ready(this.home(), agentType, "local"), await ready(this.peer().nc, agentType, "global")];
      if (home !== peer || home === null) differ.push({ agentType, home, peer });
    }
    return differ;
  }

  /**
   * Polls the peer region until its registry lists the probe agent of `region`, unmarked stale
   * when `fresh`; resolves to the wall-clock time it did (the runner's clock too), or null.
   */
  async visibleInPeer(a: { agentType: string; region: string; fresh: boolean; timeoutMs: number; intervalMs: number }): Promise<number | null> {
    const deadline = Date.now() + a.timeoutMs;
    while (Date.now() < deadline) {
      const s = await this.seenInPeer(a.agentType, a.region);
      if (s.present && (!a.fresh || !s.stale)) return Date.now();
      if (a.intervalMs > 0) await sleep(a.intervalMs);
    }
    return null;
  }

  /** The bare baseline's stream at home and its mirror in the peer region, set up as the registry's bucket mirror is. */
  async bareStreams(a: { home: string; peer: string }): Promise<void> {
    const jsm = await jetstreamManager(this.home(), { timeout: 30_000 });
    const common = { retention: RetentionPolicy.Limits, storage: StorageType.File, discard: DiscardPolicy.Old, max_msgs_per_subject: 1, num_replicas: 1, allow_direct: false };
    await jsm.streams.add({ ...common, name: BARE_STREAM, subjects: [`${BARE_SUBJECT}.>`], placement: inRegion(a.home) });
    await jsm.streams.add({ ...common, name: BARE_MIRROR, mirror: { name: BARE_STREAM }, mirror_direct: false, placement: inRegion(a.peer) });
  }

  private async bareInPeer(subject: string): Promise<boolean> {
    try {
      return (await this.peer().jsm.streams.getMessage(BARE_MIRROR, { last_by_subj: subject })) !== null;
    } catch {
      return false;
    }
  }

  /**
   * `count` pairs of samples, interleaved so the machine's other work falls on both alike:
   * a registration acknowledged at home until the peer's registry lists it, then a publish of
   * the same bytes acknowledged by the bare stream until the peer's mirror returns it.
   */
  async propagation(a: { count: number; region: string; round: string; timeoutMs: number }): Promise<object> {
    const js = jetstream(this.home(), { timeout: 30_000 });
    const registry = new Recorder();
    const bare = new Recorder();
    const registryAck = new Recorder();
    const bareAck = new Recorder();
    const missing = { registry: 0, bare: 0 };
    for (let k = 0; k < a.count; k++) {
      const agentType = `xr-${a.round}-${k}`;
      const t0 = performance.now();
      await this.register(agentType);
      const acked = performance.now();
      registryAck.add(acked - t0);
      const seen = await this.pollPeer(() => this.seenInPeer(agentType, a.region).then((s) => s.present), a.timeoutMs);
      if (seen === null) missing.registry++;
      else registry.add(seen - acked);

      const subject = `${BARE_SUBJECT}.${a.round}.${k}`;
      const b0 = performance.now();
      await js.publish(subject, registerBody(agentType, "p"));
      const bareAcked = performance.now();
      bareAck.add(bareAcked - b0);
      const arrived = await this.pollPeer(() => this.bareInPeer(subject), a.timeoutMs);
      if (arrived === null) missing.bare++;
      else bare.add(arrived - bareAcked);
    }
    return {
      count: a.count,
      missing,
      registryMs: roundSummary(registry.summary()),
      bareMs: roundSummary(bare.summary()),
      registryAckMs: roundSummary(registryAck.summary()),
      bareAckMs: roundSummary(bareAck.summary()),
    };
  }

  /** Back-to-back polls until `check` holds: performance.now() when it did, or null after `timeoutMs`. */
  private async pollPeer(check: () => Promise<boolean>, timeoutMs: number): Promise<number | null> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) if (await check()) return performance.now();
    return null;
  }

  /**
   * New instances registered at home at `ratePerSec` for `durationMs` (the writes a region
   * makes on its own during a partition), over ten probe agent types; counts the refusals.
   */
  async pacedRegistrations(a: { ratePerSec: number; durationMs: number; round: string }): Promise<{ sent: number; errors: number; firstError?: string }> {
    const started = performance.now();
    const pending: Array<Promise<string | null>> = [];
    let sent = 0;
    while (performance.now() - started < a.durationMs) {
      const due = Math.floor(((performance.now() - started) / 1000) * a.ratePerSec);
      for (; sent < due; sent++) pending.push(requestOk(this.home(), SUBJ.register(`xr-churn-${sent % 10}`), registerBody(`xr-churn-${sent % 10}`, `${a.round}c${sent}`), 30_000));
      await sleep(5);
    }
    const errors = (await Promise.all(pending)).filter((e) => e !== null);
    return { sent, errors: errors.length, ...(errors[0] ? { firstError: errors[0] } : {}) };
  }

  /** The last sequence of a stream, read at home or in the peer region. */
  async streamSeq(a: { stream: string; where: "home" | "peer" }): Promise<number> {
    const jsm = a.where === "peer" ? this.peer().jsm : this.homeJsm!;
    return (await jsm.streams.info(a.stream)).state.last_seq;
  }

  /** Polls a stream of the peer region until it holds `target`: the wall-clock time it did, or null. */
  async peerStreamReaches(a: { stream: string; target: number; timeoutMs: number; intervalMs: number }): Promise<number | null> {
    const deadline = Date.now() + a.timeoutMs;
    while (Date.now() < deadline) {
      const seq = await this.streamSeq({ stream: a.stream, where: "peer" }).catch(() => -1);
      if (seq >= a.target) return Date.now();
      await sleep(a.intervalMs);
    }
    return null;
  }
}

/** The load worker's commands for the regions benchmark. */
export function regionCommands(home: () => NatsConnection): Record<string, (a: Record<string, any>) => Promise<unknown>> {
  const r = new RegionsLoad(home);
  return {
    regionsPeer: (a) => r.connectPeer(a["url"]),
    regionsClose: () => r.close(),
    regionsRegister: (a) => r.register(a["agentType"]),
    regionsCompare: (a) => r.compareViews({ agentTypes: a["agentTypes"], region: a["region"] }),
    regionsSeen: (a) => r.seenInPeer(a["agentType"], a["region"]),
    regionsVisible: (a) => r.visibleInPeer({ agentType: a["agentType"], region: a["region"], fresh: a["fresh"] ?? true, timeoutMs: a["timeoutMs"], intervalMs: a["intervalMs"] ?? 20 }),
    regionsBareStreams: (a) => r.bareStreams({ home: a["home"], peer: a["peer"] }),
    regionsPropagation: (a) => r.propagation({ count: a["count"], region: a["region"], round: a["round"], timeoutMs: a["timeoutMs"] ?? 30_000 }),
    regionsChurn: (a) => r.pacedRegistrations({ ratePerSec: a["ratePerSec"], durationMs: a["durationMs"], round: a["round"] }),
    regionsStreamSeq: (a) => r.streamSeq({ stream: a["stream"], where: a["where"] ?? "home" }),
    regionsPeerStreamReaches: (a) => r.peerStreamReaches({ stream: a["stream"], target: a["target"], timeoutMs: a["timeoutMs"], intervalMs: a["intervalMs"] ?? 20 }),
  };
}
