import { describe, expect, it } from "vitest";
import { colorEnabled, colors, renderFields, renderTable, statusColor, visibleWidth } from "../../../src/cli/table.js";

describe("renderTable", () => {
  it("aligns every column to its widest cell and trims trailing spaces", () => {
    const out = renderTable(
      ["NAME", "STATUS", "N"],
      [
        ["summarizer", "ready", 2],
        ["x", "deregistered", 10],
      ],
      { right: [2] },
    );
    expect(out.split("\n")).toEqual([
      "NAME        STATUS         N",
      "summarizer  ready          2",
      "x           deregistered  10",
    ]);
  });

  it("prints - for missing cells and keeps the header when there are no rows", () => {
    expect(renderTable(["A", "B"], [["1", null], [undefined, "2"]])).toBe("A  B\n1  -\n-  2");
    expect(renderTable(["A", "LONG"], [])).toBe("A  LONG");
  });

  it("measures coloured cells by what shows on screen", () => {
    const c = colors(true);
    const out = renderTable(["S", "X"], [[c.green("ready"), "a"], ["draining", "b"]], { colors: c });
    // eslint-disable-next-line no-control-regex
    const lines = out.split("\n").map((l) => l.replace(/\u001b\[[0-9;]*m/g, ""));
    expect(lines).toEqual(["S         X", "ready     a", "draining  b"]);
    expect(visibleWidth(c.red("abc"))).toBe(3);
  });

  it("counts characters, not UTF-16 units", () => {
    expect(renderTable(["A", "B"], [["😀", "x"]]).split("\n")[1]).toBe("😀  x");
  });
});

describe("colour", () => {
  it("is on only for a terminal without NO_COLOR", () => {
    expect(colorEnabled(true, {})).toBe(true);
    expect(colorEnabled(true, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled(true, { NO_COLOR: "" })).toBe(true);
    expect(colorEnabled(false, {})).toBe(false);
    expect(colorEnabled(undefined, {})).toBe(false);
  });

  it("leaves text untouched when disabled", () => {
    const c = colors(false);
    expect(c.red("x") + c.bold("y") + statusColor(c, "ready")).toBe("xyready");
    expect(statusColor(colors(true), "ready")).toBe("\u001b[32mready\u001b[0m");
  });
});

describe("renderFields", () => {
  it("aligns the values after the keys", () => {
    expect(renderFields([["agent_type", "a"], ["tags", null], ["v", 1]])).toBe("agent_type: a\ntags:       -\nv:          1");
  });
});
