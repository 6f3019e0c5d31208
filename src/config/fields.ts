/**
 * The zod field types the settings tables share: a value comes as a string from the
 * environment or a flag, or typed from overrides, and every table reads it the same way.
 */
import { z } from "zod";
import { hostListProblem } from "../kit/hosts.js";

export const bool = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"])])
  .transform((v) => (typeof v === "boolean" ? v : ["true", "1", "yes", "on"].includes(v)));

export const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

/** A comma-separated list (or a repeated flag); blanks dropped. */
export const list = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter((s) => s !== ""));

/** Host names a `Host` header may name (no port, scheme or wildcard), a list as above, each checked. */
export const hostList = list.superRefine((names, ctx) => {
  const problem = hostListProblem(names);
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
});

/** An empty string counts as unset. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

export const logLevel = z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info");
