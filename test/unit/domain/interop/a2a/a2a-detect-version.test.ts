/**
 * A2A version detection follows the official JS SDK (a2aproject/a2a-js `isLegacyAgentCard`,
 * `isLegacyVersion`): these cases are the rules it applies, in its order.
 */
import { describe, expect, it } from "vitest";
import { detectA2aVersion, isLegacyProtocolVersion } from "../../../../../src/domain/interop/a2a/index.js";
import { loadCard } from "../../../a2a-fixtures.js";

const iface = { url: "https://a.test", protocolBinding: "JSONRPC", protocolVersion: "1.0" };

describe("detectA2aVersion", () => {
  it.each<[string, unknown, "0.3" | "1.0"]>([
    ["a non-empty supportedInterfaces wins over every v0.3 marker", { supportedInterfaces: [iface], url: "u", preferredTransport: "GRPC", protocolVersion: "0.3.0" }, "1.0"],
    ["a string url without supportedInterfaces", { url: "https://a.test" }, "0.3"],
    ["a string url next to an empty supportedInterfaces is not enough", { url: "https://a.test", supportedInterfaces: [] }, "1.0"],
    ["a url that is not a string is not a marker", { url: 42 }, "1.0"],
    ["preferredTransport present", { supportedInterfaces: [], preferredTransport: "JSONRPC" }, "0.3"],
    ["additionalInterfaces present, whatever its value", { additionalInterfaces: null }, "0.3"],
    ["supportsAuthenticatedExtendedCard present, even false", { supportsAuthenticatedExtendedCard: false }, "0.3"],
    ["protocolVersion 0.3.0", { protocolVersion: "0.3.0" }, "0.3"],
    ["protocolVersion 0.9", { protocolVersion: "0.9" }, "0.3"],
    ["protocolVersion 0.2.1 is below the legacy range", { protocolVersion: "0.2.1" }, "1.0"],
    ["protocolVersion 1.0", { protocolVersion: "1.0" }, "1.0"],
    ["an empty protocolVersion counts as legacy", { protocolVersion: "" }, "0.3"],
    ["a protocolVersion that is not a string is ignored", { protocolVersion: 0.3 }, "1.0"],
    ["no marker at all: 1.0", { name: "x", skills: [] }, "1.0"],
    ["not an object: 1.0", ["url"], "1.0"],
  ])("%s", (_rule, card, version) => {
    expect(detectA2aVersion(card)).toBe(version);
  });

  it("reads the fixtures as their authors meant", () => {
    expect(detectA2aVersion(loadCard("v0_3-valid"))).toBe("0.3");
    expect(detectA2aVersion(loadCard("v1_0-valid"))).toBe("1.0");
    expect(detectA2aVersion(loadCard("legacy-no-protocol-version"))).toBe("0.3");
    expect(detectA2aVersion(loadCard("hybrid"))).toBe("1.0");
    expect(detectA2aVersion(loadCard("sbom"))).toBe("0.3");
  });
});

describe("isLegacyProtocolVersion", () => {
  it.each<[string, boolean]>([
    ["0.3", true],
    ["0.3.0", true],
    [" 0.3.1 ", true],
    ["0.10", true],
    ["0.3rc1", true],
    ["0", false],
    ["0.2.9", false],
    ["1", false],
    ["1.0", false],
    ["2.0.0", false],
    ["v0.3", false],
    ["-0.3", true],
    ["-1.3", false],
    ["latest", false],
    ["", true],
    ["   ", true],
  ])("%j -> %s", (version, legacy) => {
    expect(isLegacyProtocolVersion(version)).toBe(legacy);
  });
});
