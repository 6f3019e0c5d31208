/**
 * The register endpoint's parse of a body (service/messages.ts) lets each of the three forms
 * of PROTOCOL.md sections 2, 10.1 and 10.2 through to specOfRegisterBody, which judges them.
 */
import { describe, expect, it } from "vitest";
import { parseMessage, registerMessage } from "../../../src/domain/messages.js";

describe("registerMessage", () => {
  it("takes a body with spec, with a2a_card or with mcp_toolspec", () => {
    expect(parseMessage(registerMessage, { spec: { agent_type: "a" } }, "register").spec).toEqual({ agent_type: "a" });
    expect(parseMessage(registerMessage, { agent_type: "a", a2a_card: { name: "A" }, strict: true }, "register")).toMatchObject({ a2a_card: { name: "A" }, strict: true });
    const toolspec = { agent_type: "a", mcp_toolspec: { tools: [] }, description: "d", version: "1.0.0" };
    expect(parseMessage(registerMessage, toolspec, "register")).toMatchObject(toolspec);
  });

  it("still checks the instance's fields", () => {
    expect(() => parseMessage(registerMessage, { a2a_card: {}, instance_id: "no spaces allowed" }, "register")).toThrow(/instance_id/);
    expect(() => parseMessage(registerMessage, { a2a_card: {}, status: "draining" }, "register")).toThrow(/status/);
  });
});
