import { RegistryError } from "../../src/domain/errors.js";

/** Runs `fn` and returns the error of class `type` it throws; anything else (or nothing) fails the test. */
export function thrownError<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error(`expected a ${type.name}`);
}

/** Runs `fn` and returns the RegistryError it throws; anything else (or nothing) fails the test. */
export const thrownRegistryError = (fn: () => unknown): RegistryError => thrownError(RegistryError, fn);

/** Awaits `p` and returns the error of class `type` it rejects with; anything else (or a resolve) fails the test. */
export async function rejection<E extends Error>(type: abstract new (...args: never[]) => E, p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error(`expected a rejection with a ${type.name}`);
}
