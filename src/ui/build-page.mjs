// Builds the operator's web page (docs/ui.md) into dist/ui/public: the browser code of
// src/ui/web bundled and minified by esbuild into app.js (and layout.js, the graph's layout, loaded on demand), the style sheet minified, the
// HTML copied. Run by `npm run build` after tsc; like tsc's incremental build, it rewrites a
// file only when its bytes change, and prints the sizes so growth is noticed.
import { build } from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const web = (name) => fileURLToPath(new URL(`./web/${name}`, import.meta.url));
const outDir = fileURLToPath(new URL("../../dist/ui/public/", import.meta.url));
const common = { bundle: true, minify: true, target: "es2022", legalComments: "none", logLevel: "warning", write: false };

async function bundle(entry, extra = {}) {
  const result = await build({ ...common, ...extra, entryPoints: [web(entry)], outfile: `${outDir}${entry}` });
  return result.outputFiles[0].contents;
}

// uPlot's MIT notice is not a comment esbuild keeps (no /*! or @license), so app.js carries it
// as a banner, read from the installed package's LICENSE, which the notice asks to go along.
const uplotLicence = (await readFile(fileURLToPath(new URL("../../node_modules/uplot/LICENSE", import.meta.url)), "utf8")).trim();
const uplotBanner = `/*! uPlot (bundled charts): ${uplotLicence.replace(/\*\//g, "* /")} */`;

const files = {
  // layout.js (elkjs) is its own bundle, imported by app.js only when a graph is drawn.
  "app.js": await bundle("main.ts", { format: "esm", external: ["./layout.js"], banner: { js: uplotBanner } }),
  // elkjs's licence notice (EPL-2.0) is kept at the end of its bundle.
  "layout.js": await bundle("layout.ts", { format: "esm", legalComments: "eof" }),
  "style.css": await bundle("style.css"),
  "index.html": await readFile(web("index.html")),
};

await mkdir(outDir, { recursive: true });
const sizes = [];
for (const [name, bytes] of Object.entries(files)) {
  const path = `${outDir}${name}`;
  const old = await readFile(path).catch(() => null);
  if (old === null || !Buffer.from(bytes).equals(old)) await writeFile(path, bytes);
  sizes.push(`${name} ${bytes.length} B`);
}
console.log(`web page in dist/ui/public: ${sizes.join(", ")}`);
