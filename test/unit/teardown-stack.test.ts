import { describe, expect, it } from "vitest";
import { TeardownStack } from "../../src/teardown-stack.js";
import { captureLogs } from "../harness/registry.js";

describe("TeardownStack", () => {
  it("runs the closes last in first out, each once", async () => {
    const order: string[] = [];
    const stack = new TeardownStack(captureLogs().logger);
    for (const name of ["ops", "nats", "feed"]) stack.defer(name, () => order.push(name));
    await stack.run();
    await stack.run();
    expect(order).toEqual(["feed", "nats", "ops"]);
    expect(stack.size).toBe(0);
  });

  it("logs a close that fails and still runs the rest", async () => {
    const { logger, lines } = captureLogs();
    const order: string[] = [];
    const stack = new TeardownStack(logger);
    stack.defer("first", () => order.push("first"));
    stack.defer("broken", async () => {
      throw new Error("boom");
    });
    stack.defer("last", () => order.push("last"));
    await stack.run();
    expect(order).toEqual(["last", "first"]);
    const warning = lines.find((l) => l.msg === "broken failed during shutdown");
    expect(warning).toMatchObject({ level: 40, step: "broken", err: { message: "boom" } });
  });

  it("also runs a close registered while it runs (a start step finishing late)", async () => {
    const order: string[] = [];
    const stack = new TeardownStack(captureLogs().logger);
    stack.defer("a", () => order.push("a"));
    stack.defer("b", async () => {
      order.push("b");
      stack.defer("late", () => order.push("late"));
    });
    await stack.run();
    expect(order).toEqual(["b", "late", "a"]);
  });
});
