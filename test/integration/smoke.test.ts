import { test, expect } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { startRegistry, RawClient, spec } from "../harness/registry.js";
test("smoke", async () => {
  await using server = await withNatsServer();
  await using reg = await startRegistry(server.url);
  const c = await RawClient.connect(server.url, (reg as any).config.prefix);
  const r = await c.request("register.alpha", { spec: spec("alpha") });
  console.log(r.status, r.body);
  const l = await c.request("lookup", { capability: "alpha.run", min_revision: r.body.revision });
  console.log(JSON.stringify(l.body));
  const bad = await c.request("register.alpha", "{nope");
  console.log(bad.status, bad.body, bad.msg.headers?.get("Nats-Service-Error"));
  await c.close();
});
