/**
 * What the Registry v2 startup rules report about a registry file (PROTOCOL.md sections 11.2
 * and 11.3), in the shape of the `graph` query's problems so one reader serves both. Errors
 * refuse the file; warnings are logged and reported.
 */
export const ProblemCode = {
  /** an entry that breaks the file's structure (a missing name, a version that is not semver) */
  InvalidEntry: "invalid_entry",
  UnresolvedRef: "unresolved_ref",
  MissingServer: "missing_server",
  Duplicate: "duplicate",
  Missing: "missing",
  Cycle: "cycle",
  UnusedSchema: "unused_schema",
  DanglingProvides: "dangling_provides",
  V1Format: "v1_format",
  Deprecated: "deprecated",
} as const;
export type ProblemCode = (typeof ProblemCode)[keyof typeof ProblemCode];

export type FileProblem = {
  severity: "error" | "warning";
  code: ProblemCode;
  message: string;
  path: string;
  /** The registry entry (agent_type) the problem concerns, when one does: `graph` reports it with that entry. */
  entry?: string;
};

/** One line per problem, as logs and `validate` print them: `tools[3].source.server: missing_server: ...`. */
export const formatProblem = (p: FileProblem): string => `${p.path}: ${p.code}: ${p.message}`;
