import { RegistryError } from "../../src/domain/errors.js";

/** Runs `fn` and returns the RegistryError it throws; anything else (or nothing) fails the test. */
export function thrownRegistryError(fn: () => unknown): RegistryError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RegistryError) return e;
    throw e;
  }
  throw new Error("expected a RegistryError");
}
