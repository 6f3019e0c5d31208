/**
 * The page's files, built by `npm run build` into dist/ui/public: read once into memory (a few
 * tens of kB, and the graph layout's 1.5 MB), served with their content type, an ETag and the page's security headers.
 */
import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IncomingMessage, ServerResponse } from "node:http";

/** Where the bundle is, from src/ui/server (tests) and dist/ui/server (a build) alike. */
export const DEFAULT_PUBLIC_DIR = fileURLToPath(new URL("../../../dist/ui/public/", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** No inline script or style, nothing from elsewhere, never framed. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Headers every /ui response carries. No referrer: a ?token= URL must not leak through links. */
export function setPageHeaders(res: ServerResponse): void {
  res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
}

type StaticFile = { body: Buffer; type: string; etag: string };

export class StaticFiles {
  #files: Promise<Map<string, StaticFile>> | undefined;

  constructor(private readonly dir: string = DEFAULT_PUBLIC_DIR) {}

  /** Loads the files (once); rejects when the page was not built. */
  load(): Promise<Map<string, StaticFile>> {
    this.#files ??= readAll(this.dir);
    // A failed load (not built yet) is tried again on the next request.
    this.#files.catch(() => (this.#files = undefined));
    return this.#files;
  }

  /** Serves `name` (a file of the bundle, e.g. "app.js"); false when there is no such file. */
  async serve(req: IncomingMessage, res: ServerResponse, name: string): Promise<boolean> {
    let files: Map<string, StaticFile>;
    try {
      files = await this.load();
    } catch {
      res.statusCode = 503;
      res.setHeader("Content-Type", "text/plain; charset=utf-8");
      res.end("The web page is not built: run `npm run build` (docs/ui.md).\n");
      return true;
    }
    const file = files.get(name);
    if (!file) return false;
    res.setHeader("ETag", file.etag);
    // The page itself is checked on every load; the bundle may be reused for a while, then checked.
    res.setHeader("Cache-Control", name === "index.html" ? "no-cache" : "public, max-age=300, must-revalidate");
    if (req.headers["if-none-match"] === file.etag) {
      res.statusCode = 304;
      res.end();
      return true;
    }
    res.statusCode = 200;
    res.setHeader("Content-Type", file.type);
    res.setHeader("Content-Length", file.body.length);
    res.end(req.method === "HEAD" ? undefined : file.body);
    return true;
  }
}

async function readAll(dir: string): Promise<Map<string, StaticFile>> {
  const out = new Map<string, StaticFile>();
  for (const name of await readdir(dir)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type === undefined) continue; // source maps and anything else stay private
    const body = await readFile(join(dir, name));
    out.set(name, { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` });
  }
  if (!out.has("index.html")) throw new Error(`no index.html in ${dir}`);
  return out;
}
