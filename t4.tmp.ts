import { startNatsServer } from "./src/adapters/nats/nats-server-process.ts";
try { await startNatsServer({ configText: "authorization { users = [ {user: a, password" }); } catch (e) { console.log(String(e)); }
const a = await startNatsServer({ jetstream: false });
try { await startNatsServer({ port: a.port, jetstream: false }); } catch (e) { console.log(String(e).split("\n").slice(0,2).join("\n"), "..."); }
try { await startNatsServer({ startTimeoutMs: 1, jetstream: true }); } catch (e) { console.log(String(e).split("\n").slice(0,3).join("\n")); }
await a.stop();
