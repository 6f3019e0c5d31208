/**
 * A port that was free a moment ago, for listeners that cannot bind port 0 themselves.
 * Prefer port 0 (or nats-server's -1) wherever the listener reports its port.
 */
export { pickFreePort as freePort } from "../../src/adapters/nats/nats-server-process.js";
