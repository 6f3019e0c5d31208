/**
 * Reads the registry's card signing key (REGISTRY_CARD_SIGNING_KEY): a file holding one private
 * JWK. A file that cannot be read or holds no usable key stops the start, naming the file.
 */
import { readFile } from "node:fs/promises";
import { CardSigner, CardSigningKeyError } from "../../domain/trust/card-signer.js";

/** A JWK is a few hundred bytes; anything much larger is not one. */
const MAX_FILE_BYTES = 64 * 1024;

export async function loadCardSigningKey(path: string): Promise<CardSigner> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new Error(`REGISTRY_CARD_SIGNING_KEY=${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e });
  }
  if (Buffer.byteLength(text) > MAX_FILE_BYTES) throw new Error(`REGISTRY_CARD_SIGNING_KEY=${path}: over ${MAX_FILE_BYTES} bytes, not a JWK`);
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch (e) {
    throw new Error(`REGISTRY_CARD_SIGNING_KEY=${path}: not JSON (${(e as Error).message})`, { cause: e });
  }
  try {
    return await CardSigner.fromJwk(jwk);
  } catch (e) {
    if (e instanceof CardSigningKeyError) throw new Error(`REGISTRY_CARD_SIGNING_KEY=${path}: ${e.message}`, { cause: e });
    throw e;
  }
}
