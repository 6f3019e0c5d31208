/**
 * `trust set TENANT FILE`, `trust get TENANT`, `trust delete TENANT` (v1.2, docs/trust.md
 * "Trust roots in the bucket"): a tenant's trust roots kept in the registry's bucket, where
 * every replica follows them. FILE holds the tenant's entry exactly as the trust file writes
 * one, with its keys inline. They need the operator role under deploy/nats/auth.conf.
 */
import type { TenantTrustEntry, TrustRootsReply } from "../../client/types.js";
import { ExitCode, UsageError, str, type Command, type CommandContext } from "../context.js";
import { renderFields } from "../table.js";
import { readPayload } from "./check.js";

const USAGE = "trust set TENANT FILE [--by NAME] [--revision N] | trust get TENANT | trust delete TENANT [--by NAME] [--revision N]";

/** `--revision N` as the compare-and-set's expected revision (0: none stored yet). */
function expected(ctx: CommandContext): { revision?: number } {
  const raw = str(ctx.values["revision"]);
  if (raw === undefined) return {};
  const revision = Number(raw);
  if (!(Number.isInteger(revision) && revision >= 0)) throw new UsageError(`--revision: expected an integer of 0 or more, got "${raw}"`);
  return { revision };
}

function byOf(ctx: CommandContext): { by?: string } {
  const by = str(ctx.values["by"]) ?? ctx.io.env["USER"];
  return by === undefined || by === "" ? {} : { by };
}

async function set(ctx: CommandContext, tenant: string, file: string): Promise<number> {
  const trust = readPayload(file);
  if (typeof trust !== "object" || trust === null || Array.isArray(trust)) throw new UsageError(`${file} is not a tenant's trust entry (a JSON object)`);
  const reply = await (await ctx.client()).setTrustRoots(tenant, { trust: trust as TenantTrustEntry, ...byOf(ctx), ...expected(ctx) });
  if (ctx.json) ctx.printJson(reply);
  else ctx.out(`tenant ${tenant}'s trust roots stored in the bucket${reply.by === null ? "" : ` by ${reply.by}`}: ${summary(reply)} (revision ${reply.revision})`);
  return ExitCode.Ok;
}

async function get(ctx: CommandContext, tenant: string): Promise<number> {
  const reply = await (await ctx.client()).getTrustRoots(tenant);
  if (ctx.json) {
    ctx.printJson(reply);
    return ExitCode.Ok;
  }
  const t = reply.trust;
  const fields: Array<[string, string]> = [["tenant", tenant], ["in force", INFORCE[reply.in_force]]];
  if (t === null) fields.push(["bucket", "no entry"]);
  else {
    const signers = (t.signers ?? []).map((s) => `${s.kid} for ${s.publisher}: ${s.agent_types.join(", ")}${s.not_after === undefined ? "" : ` until ${s.not_after}`}`);
    fields.push(["mode", t.mode ?? "off"], ["approval", t.approval ?? "auto"], ["keys", kids(t).join(", ") || "none"], ["signers", signers.join("; ") || "none"]);
    fields.push(["set by", reply.by ?? "-"], ["revision", String(reply.revision)]);
  }
  ctx.out(renderFields(fields, { colors: ctx.colors }));
  return ExitCode.Ok;
}

async function remove(ctx: CommandContext, tenant: string): Promise<number> {
  const reply = await (await ctx.client()).deleteTrustRoots(tenant, { ...byOf(ctx), ...expected(ctx) });
  if (ctx.json) ctx.printJson(reply);
  else ctx.out(`tenant ${tenant}'s trust roots deleted from the bucket${reply.by === null ? "" : ` by ${reply.by}`}; roots in force: ${INFORCE[reply.in_force]}`);
  return ExitCode.Ok;
}

const INFORCE: Record<TrustRootsReply["in_force"], string> = {
  file: "the trust file (it wins over the bucket)",
  bucket: "the bucket",
  none: "none (mode off, approval auto)",
};

const kids = (t: TenantTrustEntry): string[] => (t.jwks?.keys ?? []).map((k) => String(k["kid"]));
const summary = (r: TrustRootsReply): string => `mode ${r.trust?.mode ?? "off"}, approval ${r.trust?.approval ?? "auto"}, keys ${kids(r.trust ?? {}).join(", ") || "none"}`;

export const trustCommand: Command = {
  name: "trust",
  summary: "set, show or delete a tenant's trust roots in the registry's bucket (operators; the trust file wins for a tenant it names)",
  usage: USAGE,
  examples: [
    "agent-registry trust set globex globex-trust.json --by alice --revision 0",
    "agent-registry trust get globex",
    "agent-registry trust delete globex --by alice --revision 12",
  ],
  options: {
    by: { type: "string", value: "NAME", description: "set, delete: who changes the roots, recorded and in the event (default $USER)" },
    revision: { type: "string", value: "N", description: "set, delete: the revision of the stored entry you expect (get shows it; 0: none stored): refused if it changed since" },
  },
  args: { min: 2, max: 3 },
  async run(ctx) {
    const [action, tenant, file] = ctx.args;
    if (action === "set" && tenant !== undefined && file !== undefined) return set(ctx, tenant, file);
    if (action === "get" && tenant !== undefined && file === undefined) return get(ctx, tenant);
    if (action === "delete" && tenant !== undefined && file === undefined) return remove(ctx, tenant);
    throw new UsageError(`usage: agent-registry ${USAGE}`);
  },
};
