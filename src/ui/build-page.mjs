// Builds the operator's web page (docs/ui.md) into dist/ui/public: the browser code of
// src/ui/web bundled and minified by esbuild into one app.js, the style sheet minified, the
// HTML copied. Run by `npm run build` after tsc; prints the sizes so growth is noticed.
import { build } from "esbuild";
import { copyFile, mkdir, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const web = (name) => fileURLToPath(new URL(`./web/${name}`, import.meta.url));
const outDir = fileURLToPath(new URL("../../dist/ui/public/", import.meta.url));

await mkdir(outDir, { recursive: true });
const common = { bundle: true, minify: true, target: "es2022", legalComments: "none", logLevel: "warning" };
await build({ ...common, entryPoints: [web("main.ts")], format: "esm", outfile: `${outDir}app.js` });
await build({ ...common, entryPoints: [web("style.css")], outfile: `${outDir}style.css` });
await copyFile(web("index.html"), `${outDir}index.html`);

const sizes = await Promise.all(["index.html", "app.js", "style.css"].map(async (f) => `${f} ${(await stat(`${outDir}${f}`)).size} B`));
console.log(`web page built in dist/ui/public: ${sizes.join(", ")}`);
