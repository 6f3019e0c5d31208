import { randomBytes } from "node:crypto";

/** 16 characters of [A-Za-z0-9_-]: unique enough for replicas, short enough for subjects. */
export function newInstanceId(): string {
  return randomBytes(12).toString("base64url");
}
