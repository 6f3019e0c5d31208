/**
 * missingNodeFlags: which of the service's V8 flags a process was started without, whether
 * they came on node's command line or in NODE_OPTIONS, spelled with dashes or underscores.
 */
import { describe, expect, it } from "vitest";
import { SERVICE_NODE_FLAGS, missingNodeFlags } from "../../src/node-flags.js";

const names = SERVICE_NODE_FLAGS.map((f) => f.split("=")[0]!);

describe("missingNodeFlags", () => {
  it("names every service flag when node got none", () => {
    expect(missingNodeFlags([], "")).toEqual([...SERVICE_NODE_FLAGS]);
    expect(missingNodeFlags(["--enable-source-maps"], "--trace-warnings")).toEqual([...SERVICE_NODE_FLAGS]);
  });

  it("finds them on the command line or in NODE_OPTIONS", () => {
    expect(missingNodeFlags([...SERVICE_NODE_FLAGS], "")).toEqual([]);
    expect(missingNodeFlags([], ` ${SERVICE_NODE_FLAGS.join("  ")} --trace-warnings`)).toEqual([]);
  });

  it("accepts another value the operator chose, and V8's underscore spelling", () => {
    expect(missingNodeFlags(names.map((n) => `${n}=256`), "")).toEqual([]);
    expect(missingNodeFlags([], names.map((n) => `${n.replace(/(?<=\w)-/g, "_")}=256`).join(" "))).toEqual([]);
  });

  it("does not take a flag for one whose name merely starts the same way", () => {
    expect(missingNodeFlags(names.map((n) => `${n}-extra=1`), "")).toEqual([...SERVICE_NODE_FLAGS]);
  });
});
