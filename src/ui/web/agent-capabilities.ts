/** The capabilities of an agent's spec, each a <details> with its tags and input and output schemas. */
import type { AgentView } from "../../protocol/messages.js";
import { fill, h } from "./dom.js";
import { schemaView } from "./schema.js";

export function renderCapabilities(capabilities: HTMLElement, a: AgentView): void {
  fill(
    capabilities,
    h("h3", { id: "h-capabilities" }, `Capabilities (${a.capabilities.length})`),
    ...a.capabilities.map((c) =>
      h(
        "details",
        { class: "capability", "data-capability": c.name },
        h("summary", {}, h("code", {}, c.name), " — ", c.description),
        c.tags.length > 0 ? h("p", { class: "muted" }, "Tags: ", c.tags.join(", ")) : null,
        schemaView("Input", c.input_schema),
        schemaView("Output", c.output_schema),
      ),
    ),
  );
}
