/**
 * The lookup baseline: a service in the same framework as the registry (@nats-io/services,
 * same connection options, a queue group) whose one endpoint replies with fixed bytes of
 * the size of a real lookup reply. Whatever lookup costs beyond this is the registry's own.
 */
import { Svcm } from "@nats-io/services";
import { connect } from "../../src/client/connection.js";

const nc = await connect({ servers: process.env["NATS_URL"], name: "bench-bare-responder" });
const body = new TextEncoder().encode(process.env["BARE_BODY"] ?? "{}");
const service = await new Svcm(nc).add({ name: "bench-bare", version: "1.0.0", queue: "bench-bare" });
service.addEndpoint("lookup", {
  subject: process.env["BARE_SUBJECT"] ?? "bare.lookup",
  handler: (err, msg) => {
    if (!err) msg.respond(body);
  },
});
await nc.flush();
process.stdout.write("ready\n");

const stop = (): void => void service.stop().then(() => nc.drain()).finally(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
