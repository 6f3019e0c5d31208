/**
 * The MCP front's NATS link without a server: connection attempts are a function the test
 * controls, connections are doubles whose status stream and end the test drives. What it
 * proves: calls are refused with `unavailable` naming the URL until an attempt succeeds; the
 * first call waits for the first attempt; work tied to the connection starts when one comes
 * and stops on close; a stop during an attempt closes what that attempt brings; a connection
 * that ends by itself is replaced; nats.js's disconnect and reconnect are followed; and
 * credentials in the URL never reach the status or the logs.
 */
import type { ConnectionOptions, NatsConnection, Status } from "@nats-io/nats-core";
import { errors } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { NatsLink } from "../../../src/mcp/nats-link.js";
import { ToolError } from "../../../src/mcp/tool-error.js";
import { captureLogs } from "../../harness/registry.js";
import { waitFor } from "../../harness/wait.js";

/** A connection double: its status stream and its end are in the test's hands. */
class FakeConnection {
  closes = 0;
  #statuses: Status[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #end: (err: void | Error) => void = () => undefined;
  readonly #closed = new Promise<void | Error>((resolve) => (this.#end = resolve));

  getServer(): string {
    return "127.0.0.1:4222";
  }

  push(s: Status): void {
    this.#statuses.push(s);
    this.#wake?.();
  }

  /** The connection ends without close(), as when nats.js gives up. */
  endByItself(err: Error): void {
    this.#ended = true;
    this.#wake?.();
    this.#end(err);
  }

  close(): Promise<void> {
    this.closes++;
    this.#ended = true;
    this.#wake?.();
    this.#end();
    return Promise.resolve();
  }

  closed(): Promise<void | Error> {
    return this.#closed;
  }

  async *status(): AsyncIterable<Status> {
    for (;;) {
      const next = this.#statuses.shift();
      if (next) yield next;
      else if (this.#ended) return;
      else await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  get asNats(): NatsConnection {
    return this as unknown as NatsConnection;
  }
}

/** Attempts answered one by one, as the test decides. */
function scriptedConnect() {
  const pending: Array<{ resolve: (nc: NatsConnection) => void; reject: (e: Error) => void }> = [];
  let attempts = 0;
  const connect = (_o: ConnectionOptions) =>
    new Promise<NatsConnection>((resolve, reject) => {
      attempts++;
      pending.push({ resolve, reject });
    });
  return {
    connect,
    attempts: () => attempts,
    async fail(err: Error) {
      await waitFor(() => pending.length > 0, { message: "a connection attempt" });
      pending.shift()!.reject(err);
    },
    async succeed(nc: FakeConnection) {
      await waitFor(() => pending.length > 0, { message: "a connection attempt" });
      pending.shift()!.resolve(nc.asNats);
    },
  };
}

// No pause between attempts: the tests wait for attempts, not for time.
const connection: ConnectionOptions = { servers: ["nats://alice:s3cret@127.0.0.1:4999"], reconnectTimeWait: 0, reconnectJitter: 0 };
const URL_SHOWN = "nats://alice:[redacted]@127.0.0.1:4999";

function startLink(connect: (o: ConnectionOptions) => Promise<NatsConnection>) {
  const { logger, lines } = captureLogs();
  const link = NatsLink.connectInBackground({ connection, client: { prefix: "reg" }, log: logger, connect });
  return { link, lines };
}

const refusal = async (link: NatsLink): Promise<ToolError> => {
  const e = await link.client().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
};

describe("NatsLink", () => {
  it("refuses calls with unavailable naming the URL until an attempt succeeds, then gives the client", async () => {
    const script = scriptedConnect();
    const { link, lines } = startLink(script.connect);
    // The first call waits for the first attempt rather than refusing while it is under way.
    const firstCall = refusal(link);
    await script.fail(new Error("connection refused"));
    const refused = await firstCall;
    expect(refused.code).toBe("unavailable");
    expect(refused.message).toContain(`no connection to NATS at ${URL_SHOWN}`);
    expect(refused.message).toContain("(connection refused); this MCP server is still connecting");
    expect(link.status()).toMatchObject({ connected: false, url: URL_SHOWN, lastError: "connection refused" });

    await script.fail(new errors.AuthorizationError("Authorization Violation"));
    await waitFor(() => link.status().lastError !== "connection refused", { message: "the second failure" });
    expect(link.status().lastError).toBe("the server refused the credentials: Authorization Violation");

    const nc = new FakeConnection();
    await script.succeed(nc);
    const client = await link.client();
    expect(client.subjects.prefix).toBe("reg");
    expect(link.status()).toMatchObject({ connected: true, lastError: null });
    expect(script.attempts()).toBe(3);

    // One warn line at the first failure, one info line when the reason changed, one when connected; no password anywhere.
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, `NATS at ${URL_SHOWN} unreachable (connection refused); serving MCP and retrying every 0s`],
      [30, `NATS at ${URL_SHOWN} still unreachable (the server refused the credentials: Authorization Violation); retrying`],
      [30, `connected to NATS at ${URL_SHOWN}; the MCP tools reach the registry`],
    ]);
    expect(JSON.stringify(lines)).not.toContain("s3cret");
    await link.close();
    expect(nc.closes).toBe(1);
  });

  it("starts connection work when a connection comes, and stops it on close", async () => {
    const script = scriptedConnect();
    const { link } = startLink(script.connect);
    const events: string[] = [];
    link.onConnection(() => {
      events.push("start");
      return () => events.push("stop");
    });
    await script.fail(new Error("connection refused"));
    expect(events).toEqual([]);
    await script.succeed(new FakeConnection());
    await link.client();
    expect(events).toEqual(["start"]);
    await link.close();
    expect(events).toEqual(["start", "stop"]);
  });

  it("a stop during an attempt closes the connection that attempt brings, and tries no more", async () => {
    const script = scriptedConnect();
    const { link } = startLink(script.connect);
    await waitFor(() => script.attempts() === 1, { message: "the first attempt" });
    await link.close();
    const late = new FakeConnection();
    await script.succeed(late);
    await waitFor(() => late.closes === 1, { message: "the late connection to be closed" });
    expect(script.attempts()).toBe(1);
    expect((await refusal(link)).message).toBe("this MCP server is stopping");
  });

  it("follows nats.js's disconnect and reconnect, refusing calls while disconnected", async () => {
    const script = scriptedConnect();
    const { link } = startLink(script.connect);
    const nc = new FakeConnection();
    await script.succeed(nc);
    await link.client();
    nc.push({ type: "disconnect", server: "127.0.0.1:4999" });
    await waitFor(() => !link.status().connected, { message: "the disconnect to be seen" });
    expect(link.status().lastError).toBe("lost the connection to 127.0.0.1:4999");
    expect((await refusal(link)).message).toContain("lost the connection");
    nc.push({ type: "reconnect", server: "127.0.0.1:4999" });
    await waitFor(() => link.status().connected, { message: "the reconnect to be seen" });
    await expect(link.client()).resolves.toBeDefined();
    await link.close();
  });

  it("replaces a connection that ends by itself, and runs the connection work again on the new one", async () => {
    const script = scriptedConnect();
    const { link, lines } = startLink(script.connect);
    const started: number[] = [];
    link.onConnection(() => {
      started.push(script.attempts());
      return () => undefined;
    });
    const first = new FakeConnection();
    await script.succeed(first);
    await link.client();
    first.endByItself(new Error("Authorization Violation"));
    await waitFor(() => !link.status().connected, { message: "the end to be seen" });
    expect(link.status().lastError).toBe("the connection closed: Authorization Violation");
    await script.succeed(new FakeConnection());
    await waitFor(() => link.status().connected, { message: "the new connection" });
    expect(started).toEqual([1, 2]);
    expect(lines.some((l) => l.msg === "the connection closed: Authorization Violation; connecting again")).toBe(true);
    await link.close();
  });
});
