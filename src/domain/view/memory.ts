/**
 * How the view keeps a large fleet small in memory: one shared object or string where
 * 100,000 instances would otherwise each hold their own copy (docs/performance.md).
 */
import { InstanceStatus } from "../model/model.js";

/** Shared by every instance without metadata (most of them): one object instead of 100,000. */
export const NO_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** The module's constant for a status string read from the store. */
export function sharedStatus(status: InstanceStatus): InstanceStatus {
  switch (status) {
    case InstanceStatus.Ready:
      return InstanceStatus.Ready;
    case InstanceStatus.Draining:
      return InstanceStatus.Draining;
    case InstanceStatus.Registered:
      return InstanceStatus.Registered;
    default:
      return status;
  }
}

export function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * A copy of `s` that does not keep alive the longer string it was cut from: V8 makes substrings
 * of 13 characters or more as slices sharing their parent, here a store key or message subject,
 * and 100,000 instances kept 15 MB of those alive (docs/performance.md).
 */
export const detached = (s: string): string => (" " + s).slice(1);
