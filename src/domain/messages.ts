/**
 * Wire messages of PROTOCOL.md section 2 as zod schemas; the types come from z.infer.
 * Objects are loose where the protocol allows extra fields (forward compatibility for
 * clients written against a newer protocol) and the spec itself is validated separately.
 */
import { z } from "zod";
import { capabilityName, instanceId, agentType } from "./spec.js";

const statusValue = z.enum(["registered", "ready", "draining", "deregistered"]);
const minRevision = z.number().int().min(0).optional();

export const registerMessage = z.object({
  spec: z.unknown(),
  instance_id: instanceId.optional(),
  heartbeat_interval_ms: z.number().int().positive().optional(),
  status: z.enum(["registered", "ready"]).optional(),
  metadata: z.record(z.string().max(256), z.string().max(4096)).optional(),
});
export type RegisterMessage = z.infer<typeof registerMessage>;

export const heartbeatMessage = z.object({
  status: z.enum(["ready", "draining", "registered"]).optional(),
  active_tasks: z.number().int().min(0).optional(),
});
export type HeartbeatMessage = z.infer<typeof heartbeatMessage>;

export const deregisterMessage = z.object({ reason: z.string().max(1024).optional() });
export type DeregisterMessage = z.infer<typeof deregisterMessage>;

export const lookupQuery = z.object({
  capability: capabilityName,
  status: z.array(statusValue).min(1).optional(),
  version: z.string().max(256).optional(),
  min_revision: minRevision,
});
export type LookupQuery = z.infer<typeof lookupQuery>;

export const getQuery = z.object({ agent_type: agentType, min_revision: minRevision });

export const listQuery = z.object({
  status: z.array(statusValue).min(1).optional(),
  owner_team: z.string().max(256).optional(),
  tags: z.record(z.string().max(256), z.string().max(4096)).optional(),
  capability: capabilityName.optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: z.string().max(512).nullable().optional(),
  min_revision: minRevision,
});
export type ListQuery = z.infer<typeof listQuery>;

export const capabilitiesQuery = z.object({ status: z.array(statusValue).min(1).optional(), min_revision: minRevision });

export const routeQuery = z.object({
  skill: capabilityName.optional(),
  tags: z.array(z.string().min(1).max(256)).max(64).optional(),
  preferred_runtime: z.string().min(1).max(128).optional(),
  min_revision: minRevision,
});

export const findQuery = z
  .object({
    skill: capabilityName.optional(),
    tag: z.string().min(1).max(256).optional(),
    name: z.string().min(1).max(256).optional(),
    min_revision: minRevision,
  })
  .refine((q) => [q.skill, q.tag, q.name].filter((v) => v !== undefined).length === 1, {
    message: "exactly one of skill, tag, name",
  });

export const searchQuery = z.object({
  query: z.string().min(1).max(1024),
  limit: z.number().int().min(1).max(100).optional(),
  min_revision: minRevision,
});

export const discoverQuery = z.object({ capability: capabilityName.optional(), min_revision: minRevision });
