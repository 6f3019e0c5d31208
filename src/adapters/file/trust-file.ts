/**
 * Reads the operator's trust file (REGISTRY_TRUST_FILE, docs/trust.md) and the JWKS files it
 * names, relative to its own directory. At start a broken file stops the start with a message
 * naming the file and the problem, before anything listens; read again when they change
 * (start/trust-reload.ts), a broken one is logged and the last good roots stay. Keys are read
 * from local files, and from the https URLs the file itself names (jwks_url) through the
 * fetcher given; never from a URL inside a signed document.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { trustDocument } from "../../domain/trust/trust-document.js";
import { trustRootsOf, type JwksFetcher, type TrustRoots } from "../../domain/trust/trust-roots.js";

/** A trust file (and each JWKS file) larger than this is an operator's mistake, refused unread. */
const MAX_TRUST_FILE_BYTES = 1024 * 1024;

export class TrustFileError extends Error {
  constructor(path: string, problem: string) {
    super(`trust file ${path}: ${problem}`);
    this.name = "TrustFileError";
  }
}

export async function loadTrustFile(path: string, fetchJwks?: JwksFetcher): Promise<TrustRoots> {
  return (await readTrustFile(path, fetchJwks)).roots;
}

/** A file the trust roots were read from, with the text read, to watch it for changes. */
export type TrustSource = { readonly path: string; readonly text: string };

/** The trust roots of the file, and every file they were read from (the trust file, then its JWKS files). */
export async function readTrustFile(path: string, fetchJwks?: JwksFetcher): Promise<{ roots: TrustRoots; sources: TrustSource[] }> {
  const sources: TrustSource[] = [];
  const parsed = trustDocument.safeParse(await readJson(path, path, sources));
  if (!parsed.success) throw new TrustFileError(path, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const base = dirname(path);
  try {
    const roots = await trustRootsOf(parsed.data, (jwksPath) => readJson(resolve(base, jwksPath), path, sources), fetchJwks);
    return { roots, sources };
  } catch (e) {
    if (e instanceof TrustFileError) throw e;
    throw new TrustFileError(path, (e as Error).message);
  }
}

async function readJson(file: string, trustFile: string, sources: TrustSource[]): Promise<unknown> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_TRUST_FILE_BYTES) throw new TrustFileError(trustFile, `${file} is over ${MAX_TRUST_FILE_BYTES} bytes`);
    text = bytes.toString("utf8");
    sources.push({ path: file, text });
  } catch (e) {
    if (e instanceof TrustFileError) throw e;
    throw new TrustFileError(trustFile, `cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new TrustFileError(trustFile, `${file} is not JSON: ${(e as Error).message}`);
  }
}
