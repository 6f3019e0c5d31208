/**
 * What one query op is: the zod schema of its body and the answer it gives to a body that
 * schema accepted. The query table (query-table.ts) holds one entry per op; the service parses
 * a body once, with the entry's schema, before it waits for anything, and hands the parsed
 * query to the answer.
 */
import type { z } from "zod";
import type { AgentIndex } from "../../domain/query/agent-index.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { CardSigner } from "../../domain/trust/card-signer.js";
import type { FileProblem } from "../../domain/spec/registry-v2/problems.js";
import type { sbomDocument } from "../../domain/sbom/sbom-document.js";
import type { LookupCache } from "./lookup-cache.js";
import type { SerializedReply } from "./serialized-reply.js";
import type { SchemaResolution } from "./schema-resolution.js";
import type { PayloadChecks } from "./payload-checks.js";
import type { RegionReadings, RegionalViews } from "./regional-queries.js";

/** The tenant a query came in for; null: the shared subjects. */
export type Tenant = string | null;

/** What the answers read: this replica's view and indexes, and the service's settings. */
export type QueryContext = {
  readonly view: RegistryView;
  readonly index: AgentIndex;
  /** This region's view and indexes, as the regional queries read every region's. */
  readonly home: RegionReadings;
  /** Capability schemas with their named refs inlined. */
  readonly resolution: SchemaResolution;
  readonly lookupCache: LookupCache<SerializedReply>;
  /** Payload validation for `check` (in worker threads in the service). */
  readonly payloads: PayloadChecks;
  readonly cardSigner: CardSigner | undefined;
  /** Writes an SBOM document: the costly part of `sbom`, run only for a request admitted. */
  readonly buildSbom: typeof sbomDocument;
  /** The warnings of the registry file this replica applied last (section 11.3). */
  fileWarnings(): readonly FileProblem[];
  /** Regional mode: the other regions' views; null outside it. */
  regions(): RegionalViews | null;
  /** Bytes the list of one reply may take (the connection's max_payload less the reply's other fields). */
  listBytes(): number;
  /** Remembers a lookup's request bytes as another name of its cache key (QueryService.cachedLookup). */
  rememberLookup(data: Uint8Array | undefined, tenant: Tenant, key: string): void;
};

/**
 * One query op. `answer` gets the body as `body` parsed it; `check` holds a rule of the body
 * zod does not state, judged with the parse (so before any wait too); `ready` is what the
 * answer waits for after `min_revision` (the search index catching up); a `document` op
 * answers the document itself, with no `revision` beside it.
 */
export type QueryEntry<S extends z.ZodType> = {
  readonly body: S;
  // Method syntax: a table of entries of different schemas is a table of QueryEntry<z.ZodType>.
  answer(q: z.infer<S>, tenant: Tenant, at: QueryContext, data: Uint8Array | undefined): object | Promise<object>;
  check?(q: z.infer<S>): void;
  ready?(at: QueryContext): Promise<void>;
  readonly document?: true;
};

/** An entry whose answer is typed by its schema. */
export function defineQuery<S extends z.ZodType>(entry: QueryEntry<S>): QueryEntry<S> {
  return entry;
}
