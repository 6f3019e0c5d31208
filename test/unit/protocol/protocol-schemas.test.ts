/**
 * The committed JSON Schemas of protocol/ are what the service's zod schemas generate
 * (scripts/protocol/protocol-files.ts): a change to a zod schema without a regenerated copy,
 * or a hand edit of a generated file, fails here with the file's name.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { protocolFiles } from "../../../scripts/protocol/protocol-files.js";

const root = new URL("../../../", import.meta.url);
const files = protocolFiles();
const regenerate = "run `npm run protocol:generate` and commit the result";

describe("generated protocol schemas", () => {
  it.each([...files.keys()])("%s is up to date", (path) => {
    const committed = existsSync(new URL(path, root)) ? readFileSync(new URL(path, root), "utf8") : null;
    expect(committed, `${path} is missing: ${regenerate}`).not.toBeNull();
    expect(committed === files.get(path), `${path} differs from what the zod schemas generate: ${regenerate}`).toBe(true);
  });

  it("protocol/schemas holds no file the generator does not write", () => {
    const stale = readdirSync(new URL("protocol/schemas/", root)).filter((name) => !files.has(`protocol/schemas/${name}`));
    expect(stale, `stale generated files: ${regenerate}`).toEqual([]);
  });

  it("generates the same text twice", () => {
    expect(protocolFiles()).toEqual(files);
  });
});
