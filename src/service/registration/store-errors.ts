/**
 * A store failure as the RegistryError a reply carries, the same for every writer (the
 * registrar, the schema registrar, an operator's rewrite of a spec record, trust roots): the
 * store that cannot be reached is 503 `unavailable`; a full bucket is `limit_exceeded` naming
 * REGISTRY_BUCKET_MAX_BYTES when the writer knows the bucket's size, else `unavailable` too.
 * Anything else is returned as it is.
 */
import { ErrorCode, RegistryError, limitExceeded } from "../../domain/errors.js";
import { StoreFullError, StoreUnavailableError } from "../../domain/ports.js";

const FULL = "the registry's store is full; nothing was written";

export function storeError(e: unknown, bucketMaxBytes?: number): unknown {
  if (e instanceof StoreUnavailableError) return new RegistryError(ErrorCode.Unavailable, "the store cannot be reached", { cause: e });
  if (e instanceof StoreFullError) {
    return bucketMaxBytes === undefined ? new RegistryError(ErrorCode.Unavailable, FULL, { cause: e }) : limitExceeded(FULL, "REGISTRY_BUCKET_MAX_BYTES", bucketMaxBytes);
  }
  return e;
}
