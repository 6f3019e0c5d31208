/**
 * Writes the generated JSON Schemas of protocol/ (scripts/protocol/protocol-files.ts) and
 * removes generated files that are no longer produced. `npm run protocol:generate`.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { protocolFiles } from "./protocol/protocol-files.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const files = protocolFiles();
mkdirSync(join(root, "protocol/schemas"), { recursive: true });
for (const name of readdirSync(join(root, "protocol/schemas"))) {
  if (!files.has(`protocol/schemas/${name}`)) rmSync(join(root, "protocol/schemas", name));
}
for (const [path, content] of files) writeFileSync(join(root, path), content);
console.log(`wrote ${files.size} files under protocol/`);
