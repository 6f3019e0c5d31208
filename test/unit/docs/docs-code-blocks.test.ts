/**
 * Every fenced code block of README.md, docs/*.md and examples/README.md is compiled, parsed
 * or checked according to its language, so the docs cannot drift from the code.
 *
 * ```ts blocks are type-checked with tsconfig.json's options (strict, NodeNext), each as an ES
 * module of its own placed next to its doc; "agent-registry/client" resolves to
 * src/client/index.ts and "agent-registry" to src/index.ts. Two rules make fragments honest:
 * - A block without imports is a fragment of the doc's running example: it is compiled after
 *   the imports of the nearest ts block above it that has some (the import line the reader
 *   was shown), so that line must name everything the fragments below it use.
 * - What a fragment takes as given without showing it (the `spec`, the `task`) is declared in
 *   a `<!-- ts-prelude ... -->` HTML comment right before its fence: hidden on the rendered
 *   page, compiled in front of the block.
 * ```json blocks must JSON.parse; ```yaml blocks must parse with `yaml`, every document.
 * ```sh / ```bash blocks must pass `bash -n`, and ```console transcripts' `$ ` lines too; in
 * both, every command that runs the CLI (`agent-registry`, `npx agent-registry`,
 * `node dist/cli/main.js`, `npx tsx src/cli/main.ts`) must get past the CLI's own argument
 * parser: a real command, real flags, the right number of arguments. So that a moved file
 * cannot leave commands unchecked, the repository files they name must exist, and
 * `npm run`/`npm start`/`npm test` must name scripts of package.json.
 * Not code, and skipped by name (see SKIPPED): mermaid, text, ebnf, conf; sql, python and go are run
 * by suites of their own (SKIPPED names them). A bare fence or any other
 * language fails: name the language, and check it here or add it to SKIPPED with the reason.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { parseArgs } from "node:util";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { COMMANDS, parseCommandArgs } from "../../../src/cli/main.js";
import { CONFIG_VARIABLES } from "../../../src/config/service.js";
import { cliArgs, consoleCommands, extractBlocks, shellCommands, type DocBlock, type ShellCommand } from "../doc-blocks.js";

const root = new URL("../../../", import.meta.url).pathname;
const DOCS = ["README.md", ...readdirSync(`${root}docs`).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), "examples/README.md"];
const blocks = DOCS.flatMap((doc) => extractBlocks(doc, readFileSync(`${root}${doc}`, "utf8")));
const where = (b: DocBlock) => `${b.doc}:${b.line}`;
const byLang = (...langs: string[]) => blocks.filter((b) => langs.includes(b.lang));

const SKIPPED: Record<string, string> = {
  mermaid: "a diagram, not code",
  text: "program output, a directory layout or prose: nothing to run",
  ebnf: "a grammar (docs/discovery.md's GET /agents filter), whose cases test/integration/discovery-http.test.ts sends to a real front",
  conf: "nats-server configuration fragments to paste into deploy/nats/auth.conf, not whole files",
  sql: "run against a mirrored audit database by test/integration/audit-mirror.test.ts",
  python: "docs/python.md's blocks run against a real registry in clients/python/tests/test_docs.py (npm test's python suite)",
  go: "docs/go.md's programs are built and run against a real registry by clients/go/docs_test.go (clients/go/scripts/check.sh)",
};
const CHECKED = ["ts", "typescript", "json", "yaml", "yml", "sh", "bash", "shell", "console"];

// ---- TypeScript ----

const PACKAGE_PATHS: Record<string, string[]> = {
  "agent-registry/client": ["./src/client/index.ts"],
  "agent-registry": ["./src/index.ts"],
};

type Unit = { block: DocBlock; file: string; source: string; headerLines: number; headerFrom: string };

function importsOf(code: string): string[] {
  const sf = ts.createSourceFile("block.ts", code, ts.ScriptTarget.Latest);
  return sf.statements.filter(ts.isImportDeclaration).map((s) => s.getText(sf));
}

/** The module each ts block is compiled as: the imports it inherits, its prelude, itself. */
function units(tsBlocks: DocBlock[]): Unit[] {
  const lastImports = new Map<string, DocBlock>();
  return tsBlocks.map((block) => {
    const own = importsOf(block.code);
    const anchor = own.length === 0 ? lastImports.get(block.doc) : undefined;
    if (own.length > 0) lastImports.set(block.doc, block);
    const header = [...(anchor ? importsOf(anchor.code) : []), ...(block.prelude ? [block.prelude] : [])].join("\n");
    const headerLines = header === "" ? 0 : header.split("\n").length;
    const headerFrom = [anchor ? `the imports of ${where(anchor)}` : "", block.prelude ? "the ts-prelude" : ""].filter(Boolean).join(" or ");
    const source = `${header}${header === "" ? "" : "\n"}${block.code}\nexport {};\n`;
    return { block, file: `${root}${block.doc}.L${block.line}.ts`, source, headerLines, headerFrom };
  });
}

function compile(list: Unit[]): Map<string, string[]> {
  const raw = ts.readConfigFile(`${root}tsconfig.json`, ts.sys.readFile).config as { compilerOptions: object };
  const parsed = ts.parseJsonConfigFileContent({ ...raw, compilerOptions: { ...raw.compilerOptions, paths: PACKAGE_PATHS, noEmit: true } }, ts.sys, root);
  const files = new Map(list.map((u) => [u.file, u]));
  const host = ts.createCompilerHost(parsed.options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f)?.source ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const u = files.get(f);
    return u ? ts.createSourceFile(f, u.source, lang) : getSourceFile.call(host, f, lang, ...rest);
  };
  const program = ts.createProgram([...files.keys()], parsed.options, host);
  const problems = new Map<string, string[]>();
  for (const u of list) {
    const sf = program.getSourceFile(u.file)!;
    problems.set(
      u.file,
      ts.getPreEmitDiagnostics(program, sf).map((d) => {
        const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
        if (d.file !== sf || d.start === undefined) return text;
        const l = sf.getLineAndCharacterOfPosition(d.start).line;
        const at = l < u.headerLines ? `in ${u.headerFrom}` : `line ${u.block.line + 1 + l - u.headerLines}`;
        return `${at}: ${text}`;
      }),
    );
  }
  return problems;
}

// ---- the CLI's argument parser ----

/** Why the CLI would refuse these arguments, or undefined when it accepts them. */
function cliProblem(args: string[]): string | undefined {
  const [name, ...rest] = args;
  if (name === undefined) return "no command";
  if (["--help", "-h", "--version", "-V"].includes(name)) return rest.length > 0 ? `${name} takes no argument` : undefined;
  if (name === "help") return rest.length > 1 || (rest[0] !== undefined && !COMMANDS.some((c) => c.name === rest[0])) ? `help of an unknown command` : undefined;
  try {
    if (name === "serve") {
      // serve parses its own flags (src/cli/serve.ts): one per configuration variable.
      const options = Object.fromEntries([["help", { type: "boolean" as const }], ...CONFIG_VARIABLES.map((v) => [v.flag, { type: "string" as const }])]);
      parseArgs({ args: rest, options, allowPositionals: false, strict: true });
      return undefined;
    }
    const cmd = COMMANDS.find((c) => c.name === name);
    if (!cmd) return `unknown command "${name}"`;
    parseCommandArgs(cmd, rest);
    return undefined;
  } catch (e) {
    return (e as Error).message.split("\n")[0];
  }
}

const SCRIPTS = (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { scripts: Record<string, string> }).scripts;
// A path into the repository: a top-level folder, then a file with an extension or a folder.
const REPO_PATH = /^(src|test|examples|deploy|docs|bench)\/[\w./-]*(\.\w+|\/)$/;

/** Why a command would not run as written in this repository, or undefined. */
function commandProblem(words: string[]): string | undefined {
  const args = cliArgs(words);
  if (args) return cliProblem(args);
  const missing = words.map((w) => w.slice(w.lastIndexOf("=") + 1)).find((w) => REPO_PATH.test(w) && !existsSync(`${root}${w}`));
  if (missing) return `${missing} does not exist`;
  const script = words[0] === "npm" ? (words[1] === "run" ? words[2] : ["start", "test"].includes(words[1] ?? "") ? words[1] : undefined) : undefined;
  return script !== undefined && !(script in SCRIPTS) ? `no npm script "${script}"` : undefined;
}

function commandProblems(commands: ShellCommand[]): string[] {
  return commands.flatMap(({ words, line }) => {
    const problem = commandProblem(words);
    return problem ? [`line ${line}: ${words.join(" ")}: ${problem}`] : [];
  });
}

function bashSyntax(script: string): string {
  const r = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
  return r.status === 0 ? "" : r.stderr;
}

// ---- the tests ----

describe("code blocks in the docs", () => {
  it("finds the blocks", () => {
    expect(byLang("ts").length).toBeGreaterThan(5);
    expect(byLang("sh").length).toBeGreaterThan(5);
  });

  const tsUnits = units(byLang("ts", "typescript"));
  let compiled: Map<string, string[]> | undefined;
  it.each(tsUnits.map((u) => [where(u.block), u] as const))("%s (ts) type-checks", (_, u) => {
    compiled ??= compile(tsUnits);
    expect(compiled.get(u.file), `${where(u.block)}: ts block does not type-check`).toEqual([]);
  });

  it.each(byLang("json").map((b) => [where(b), b] as const))("%s (json) parses", (_, b) => {
    expect(() => JSON.parse(b.code)).not.toThrow();
  });

  it.each(byLang("yaml", "yml").map((b) => [where(b), b] as const))("%s (yaml) parses", (_, b) => {
    const errors = parseAllDocuments(b.code).flatMap((d) => ("errors" in d ? d.errors.map((e) => e.message) : []));
    expect(errors, where(b)).toEqual([]);
  });

  it.each(byLang("sh", "bash", "shell").map((b) => [where(b), b] as const))("%s (sh) is valid shell and runs the CLI as it is", (_, b) => {
    expect(bashSyntax(b.code), `${where(b)}: bash -n`).toBe("");
    expect(commandProblems(shellCommands(b.code, b.line + 1)), where(b)).toEqual([]);
  });

  it.each(byLang("console").map((b) => [where(b), b] as const))("%s (console) types valid commands at its prompts", (_, b) => {
    const commands = consoleCommands(b.code, b.line + 1);
    expect(commands.length, `${where(b)}: a console block shows at least one "$ " command`).toBeGreaterThan(0);
    const script = b.code.split("\n").filter((l) => l.startsWith("$ ")).map((l) => l.slice(2)).join("\n");
    expect(bashSyntax(script), `${where(b)}: bash -n`).toBe("");
    expect(commandProblems(commands), where(b)).toEqual([]);
  });

  // Not compiled (see SKIPPED for why), but still held to their own form, so a block cannot be
  // made "not code" to dodge the checks above.
  const prose = blocks.filter((b) => b.lang in SKIPPED);
  it.each(prose.map((b) => [where(b), b] as const))("%s is a well-formed non-code block", (_where, b) => {
    expect(b.code.trim(), `${where(b)}: empty block`).not.toBe("");
    if (b.lang === "mermaid") expect(b.code.trimStart(), where(b)).toMatch(/^(flowchart|graph|sequenceDiagram|stateDiagram(-v2)?|classDiagram)\b/);
    if (b.lang === "python") expect(b.doc, `${where(b)}: clients/python/tests/test_docs.py runs the python blocks of docs/python.md only`).toBe("docs/python.md");
    if (b.lang === "go") expect(b.doc, `${where(b)}: clients/go/docs_test.go runs the go blocks of docs/go.md only`).toBe("docs/go.md");
    if (b.lang === "conf") {
      const opens = (b.code.match(/[{[]/g) ?? []).length;
      const closes = (b.code.match(/[}\]]/g) ?? []).length;
      expect(closes, `${where(b)}: a conf fragment closes what it opens`).toBeLessThanOrEqual(opens);
    }
  });

  it("names a checked or a skipped language on every fence", () => {
    const unknown = blocks.filter((b) => !CHECKED.includes(b.lang) && !(b.lang in SKIPPED)).map((b) => `${where(b)}: "${b.lang}"`);
    expect(unknown).toEqual([]);
  });
});

describe("the block checks themselves", () => {
  it("rejects unknown commands, unknown flags and wrong argument counts", () => {
    expect(cliProblem(["lookup", "text.summarize", "--status", "ready", "--json"])).toBeUndefined();
    expect(cliProblem(["serve", "--http-port", "8080"])).toBeUndefined();
    expect(cliProblem(["nope"])).toMatch(/unknown command/);
    expect(cliProblem(["ls", "--colour"])).toMatch(/colour/);
    expect(cliProblem(["lookup"])).toMatch(/missing argument/);
    expect(cliProblem(["serve", "--bucket-name", "x"])).toMatch(/bucket-name/);
  });

  it("rejects missing repository files and npm scripts", () => {
    expect(commandProblem(["npx", "tsx", "examples/agent.ts"])).toBeUndefined();
    expect(commandProblem(["npx", "tsx", "examples/nope.ts"])).toMatch(/examples\/nope.ts does not exist/);
    expect(commandProblem(["kubectl", "rollout", "status", "deploy/agent-registry"])).toBeUndefined();
    expect(commandProblem(["npm", "run", "bench", "--", "--quick"])).toBeUndefined();
    expect(commandProblem(["npm", "run", "benchmark"])).toMatch(/no npm script/);
  });

  it("reads commands out of shell text and transcripts", () => {
    const sh = "X=1 npx agent-registry watch --since 1h   # Ctrl-C\nnpm ci && node dist/cli/main.js get \\\n  'a b' 2>&1 | tee out\n";
    expect(shellCommands(sh).map((c) => cliArgs(c.words))).toEqual([["watch", "--since", "1h"], undefined, ["get", "a b"], undefined]);
    expect(consoleCommands("$ agent-registry ls\nAGENT TYPE\n$ agent-registry get x", 10).map((c) => c.line)).toEqual([10, 12]);
  });

  it("compiles a fragment with the imports above it and its prelude, and reports its doc lines", () => {
    const doc = 'x\n```ts\nimport { connect } from "agent-registry/client";\n```\n<!-- ts-prelude declare const n: number; -->\n```ts\nconst nc = await connect({});\nconst s: string = n;\nawait registerAgent(nc, {});\n```\n';
    const list = units(extractBlocks("docs/fake.md", doc));
    const problems = compile(list).get(list[1]!.file)!;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^line 8: Type 'number' is not assignable to type 'string'/);
    expect(problems[1]).toMatch(/^line 9: Cannot find name 'registerAgent'/);
  });
});
