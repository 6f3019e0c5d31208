/**
 * The discovery front's cost: ARD's `POST /search` to `agent-registry discovery` (which asks
 * the registry's `search` op over NATS, then one `list` of the page's agent types) against the
 * same `search` op asked directly over NATS with RegistryClient, one request in flight each,
 * in alternating rounds from this process, with the same random queries. The issue's target
 * is a p99 within 2 x of the NATS search's.
 */
import { Agent, request } from "node:http";
import { connect } from "../../src/client/connection.js";
import { RegistryClient } from "../../src/client/registry-client.js";
import { startDiscoveryHttp } from "../lib/processes.js";
import { fmt, ratio, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import { capabilityCount, type FleetShape } from "../lib/specs.js";
import { withStack } from "../lib/stack.js";
import { Recorder, round } from "../lib/stats.js";

const TARGET_RATIO = 2;
/** The verbs bench/lib/specs.ts writes into capability descriptions, so every query finds something. */
const VERBS = ["summarize", "translate", "classify", "extract", "rank", "plan", "review", "search", "draft", "verify", "route", "tag"];

export const discoveryScenario: Scenario = {
  name: "discovery",
  title: "ARD POST /search over HTTP",
  aliases: ["ard-search"],
  method:
    "10,000 agent types, 4 capabilities each, 3 providers per capability. From the runner, one request in flight: ARD `POST /search` " +
    "(`pageSize` 10) to `agent-registry discovery` on a kept-alive connection, and as the baseline `RegistryClient.search` (`limit` 10) " +
    "straight over NATS, with the same random queries (a verb and a kind number of the fleet's descriptions), in alternating rounds. " +
    "Every answer is checked to hold results.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const shape: FleetShape = { types: ctx.quick ? 30 : 10_000, capsPerType: 4, providersPerCap: 3 };
    const perRound = ctx.quick ? 50 : 1000;
    const rounds = ctx.quick ? 1 : 3;
    return withStack(ctx, "discovery", async ({ server, load, registry }) => {
      await registry();
      await load.call("fleet", { shape, instancesPerType: 1, intervalMs: 3_600_000 });
      const seeded = await load.call<{ errors: number; firstError?: string }>("register", { concurrency: 64 });
      ctx.check(seeded.errors === 0, `seeding the fleet failed: ${seeded.firstError}`);
      const front = await startDiscoveryHttp(server.url);
      const nc = await connect({ servers: server.url, name: "bench-discovery-baseline" });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const client = new RegistryClient(nc);
        const total = capabilityCount(shape);
        const pick = () => `${VERBS[Math.floor(Math.random() * VERBS.length)]} documents kind ${Math.floor(Math.random() * total)}`;
        let failures = 0;
        let firstFailure: string | undefined;
        const fail = (why: string) => {
          failures++;
          firstFailure ??= why;
        };
        const endpoint = new URL("search", `${front.url}/`);
        const post = (text: string) =>
          new Promise<{ status: number; text: string }>((resolve, reject) => {
            const req = request(
              { agent, host: endpoint.hostname, port: endpoint.port, path: endpoint.pathname, method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } },
              (res) => {
                let data = "";
                res.setEncoding("utf8");
                res.on("data", (c: string) => (data += c));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, text: data }));
              },
            );
            req.on("error", reject);
            req.end(text);
          });
        const overHttp = async (query: string): Promise<void> => {
          const res = await post(JSON.stringify({ query: { text: query }, pageSize: 10 }));
          const body = res.status === 200 ? (JSON.parse(res.text) as { results?: unknown[] }) : {};
          if (!body.results?.length) fail(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
        };
        const overNats = async (query: string): Promise<void> => {
          const r = await client.search({ query, limit: 10 });
          if (r.results.length === 0) fail(`no result for ${query}`);
        };
        const measure = async (ask: (q: string) => Promise<void>, n: number, ...into: Recorder[]): Promise<void> => {
          for (let i = 0; i < n; i++) {
            const started = performance.now();
            await ask(pick());
            const ms = performance.now() - started;
            for (const r of into) r.add(ms);
          }
        };
        // Warm-up: the registry builds its search index on the first search; JIT and the connection.
        await measure(overNats, ctx.quick ? 20 : 300);
        await measure(overHttp, ctx.quick ? 20 : 300);
        const http = new Recorder();
        const direct = new Recorder();
        const p50s: Array<{ http: number; nats: number }> = [];
        for (let r = 0; r < rounds; r++) {
          const h = new Recorder();
          const d = new Recorder();
          await measure(overNats, perRound, d, direct);
          await measure(overHttp, perRound, h, http);
          const hs = h.summary();
          const ds = d.summary();
          p50s.push({ http: hs.p50, nats: ds.p50 });
          ctx.check(hs.count === perRound && ds.count === perRound, "a round lost samples");
          ctx.log(`round ${r + 1}: POST /search p50 ${hs.p50.toFixed(3)} ms, NATS search p50 ${ds.p50.toFixed(3)} ms`);
        }
        ctx.check(failures === 0, `requests failed (${failures}): ${firstFailure}`);
        const hs = http.summary();
        const ds = direct.summary();
        const p99Ratio = hs.p99 / ds.p99;
        const perSecond = (mean: number) => (mean > 0 ? 1000 / mean : 0);
        return {
          rows: [
            {
              measure: "ARD POST /search, p99",
              figure: `${hs.p99.toFixed(3)} ms (${ratio(p99Ratio)} baseline)`,
              baseline: `${ds.p99.toFixed(3)} ms search over NATS (RegistryClient)`,
              target: `<= ${TARGET_RATIO} x baseline`,
              pass: p99Ratio <= TARGET_RATIO,
            },
            {
              measure: "ARD POST /search, p50",
              figure: `${hs.p50.toFixed(3)} ms (${ratio(hs.p50 / ds.p50)} baseline)`,
              baseline: `${ds.p50.toFixed(3)} ms search over NATS`,
              target: "",
              pass: null,
            },
            {
              measure: "ARD POST /search, requests per second (one in flight)",
              figure: `${fmt(perSecond(hs.mean))} (${ratio(perSecond(hs.mean) / perSecond(ds.mean))} baseline)`,
              baseline: `${fmt(perSecond(ds.mean))} searches per second over NATS`,
              target: "",
              pass: null,
            },
          ],
          notes: [`${fmt(hs.count)} requests each way, one in flight; per-round p50s (ms, HTTP / NATS): ${p50s.map((p) => `${round(p.http, 3)} / ${round(p.nats, 3)}`).join(", ")}`],
          details: { shape, http: hs, nats: ds, rounds: p50s },
        };
      } finally {
        agent.destroy();
        await nc.close();
        await front.stop();
      }
    });
  },
};
