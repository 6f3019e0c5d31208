/**
 * Signatures made by another implementation than the registry's (jws_signer.py, on Python's
 * `cryptography`), so the trust tests prove interoperation rather than jose agreeing with itself.
 */
import { spawnSync } from "node:child_process";
import canonicalize from "canonicalize";

const SCRIPT = new URL("./jws_signer.py", import.meta.url).pathname;

export type SignRequest = { key: "ES256" | "EdDSA"; pem?: string; protected: Record<string, unknown>; payload: string };
export type Signed = { pem: string; jwk: Record<string, string>; protected: string; signature: string };

export function pythonSign(req: SignRequest): Signed {
  const run = spawnSync("python3", [SCRIPT], { input: JSON.stringify(req), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`jws_signer.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Signed;
}

/** The RFC 8785 form, for tests that sign what the registry expects. */
export const jcs = (value: unknown): string => canonicalize(value) ?? "";
