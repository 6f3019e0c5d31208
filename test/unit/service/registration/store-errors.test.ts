import { describe, expect, it } from "vitest";
import { ErrorCode, RegistryError } from "../../../../src/domain/errors.js";
import { StoreConflictError, StoreFullError, StoreUnavailableError } from "../../../../src/domain/ports.js";
import { storeError } from "../../../../src/service/registration/store-errors.js";

describe("storeError", () => {
  it("answers a store that cannot be reached 503 unavailable, keeping the cause", () => {
    const cause = new StoreUnavailableError("write of agents.a timed out");
    const e = storeError(cause, 1024);
    expect(e).toBeInstanceOf(RegistryError);
    expect(e).toMatchObject({ code: ErrorCode.Unavailable, message: "the store cannot be reached", cause });
  });

  it("answers a full bucket limit_exceeded naming the setting and its size when the writer knows it, else unavailable", () => {
    const full = new StoreFullError("agents.a");
    expect(storeError(full, 1024)).toMatchObject({ code: ErrorCode.LimitExceeded, message: "the registry's store is full; nothing was written (limit 1024, REGISTRY_BUCKET_MAX_BYTES)" });
    expect(storeError(full)).toMatchObject({ code: ErrorCode.Unavailable, message: "the registry's store is full; nothing was written", cause: full });
  });

  it("returns any other error as it is: a lost compare-and-set is the caller's to retry", () => {
    const conflict = new StoreConflictError("agents.a");
    expect(storeError(conflict, 1024)).toBe(conflict);
    const other = new Error("a bug");
    expect(storeError(other)).toBe(other);
  });
});
