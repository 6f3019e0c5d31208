/**
 * Reading the fenced code blocks of a Markdown file, and reading the commands out of a shell
 * block, for docs-code-blocks.test.ts. Both are deliberately small: the docs use plain
 * fences and plain command lines, and anything this does not understand fails the test
 * rather than passing unseen.
 */

export type DocBlock = {
  /** Path of the Markdown file, relative to the repository root. */
  doc: string;
  /** Line (1-based) of the opening fence. */
  line: number;
  /** First word of the info string; "" for a bare fence. */
  lang: string;
  /** The block's text, with the fence's indentation removed. */
  code: string;
  /** Text of a `<!-- ts-prelude ... -->` comment right before the fence (blank lines allowed). */
  prelude: string | undefined;
};

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const PRELUDE = /^<!--\s*ts-prelude\b([\s\S]*)-->$/;

/** The `<!-- ts-prelude ... -->` comment that ends `text` (blank lines after it allowed). */
function preludeAtEnd(text: string): string | undefined {
  const t = text.trimEnd();
  return t.endsWith("-->") ? PRELUDE.exec(t.slice(t.lastIndexOf("<!--")))?.[1]?.trim() : undefined;
}

export function extractBlocks(doc: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent = "", fence = "", lang = ""] = open;
    const close = new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (close.test(l)) break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    if (j === lines.length) throw new Error(`${doc}:${i + 1}: fence never closed`);
    const prelude = preludeAtEnd(lines.slice(0, i).join("\n"));
    blocks.push({ doc, line: i + 1, lang: lang.toLowerCase(), code: body.join("\n"), prelude });
    i = j;
  }
  return blocks;
}

/** One simple command of a shell script: its words, quotes removed, and its first line. */
export type ShellCommand = { words: string[]; line: number };

/**
 * Splits shell text into simple commands (at newlines, `;`, `|`, `&&`, `||`, `&`), honouring
 * quotes, backslash-newline continuations and comments, and dropping redirections. `$(...)`
 * and variables stay as literal text: only the CLI's own words are checked.
 */
export function shellCommands(script: string, firstLine = 1): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let line = firstLine;
  let start = line;
  let redirect = false;
  const endWord = () => {
    if (word === undefined) return;
    if (redirect) redirect = false;
    else words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push({ words, line: start });
    words = [];
    start = line;
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "\\" && script[i + 1] === "\n") {
      i++;
      line++;
    } else if (c === "\\") {
      word = (word ?? "") + (script[++i] ?? "");
    } else if (c === "'" || c === '"') {
      const close = script.indexOf(c, i + 1);
      if (close < 0) throw new Error(`line ${line}: unclosed ${c}`);
      const quoted = script.slice(i + 1, close);
      line += quoted.split("\n").length - 1;
      word = (word ?? "") + quoted;
      i = close;
    } else if (c === "#" && word === undefined) {
      while (i + 1 < script.length && script[i + 1] !== "\n") i++;
    } else if (c === "\n") {
      line++;
      endCommand();
    } else if (c === ";" || c === "|" || c === "&") {
      if (c === "&" && script[i + 1] === ">") continue; // &> is a redirection
      if (script[i + 1] === c) i++;
      endCommand();
    } else if (c === "<" || c === ">") {
      // A redirection: "2>" "2>&1" ">>" "<": the operator and its target are not words.
      if (word !== undefined && /^\d$/.test(word)) word = undefined;
      endWord();
      if (script[i + 1] === c) i++;
      if (script[i + 1] === "&") {
        i++;
        while (/\d/.test(script[i + 1] ?? "")) i++;
        continue;
      }
      redirect = true;
    } else if (c === " " || c === "\t") {
      endWord();
    } else {
      word = (word ?? "") + c;
    }
  }
  endCommand();
  return commands;
}

/** The commands typed at the `$ ` prompts of a console transcript, with their doc lines. */
export function consoleCommands(code: string, firstLine: number): ShellCommand[] {
  return code.split("\n").flatMap((l, i) => (l.startsWith("$ ") ? shellCommands(l.slice(2), firstLine + i) : []));
}

/** How the docs run the CLI: the installed binary, npx, the built file, or tsx on the source. */
const CLI_PREFIXES: readonly (readonly string[])[] = [
  ["agent-registry"],
  ["npx", "agent-registry"],
  ["node", "dist/cli/main.js"],
  ["npx", "tsx", "src/cli/main.ts"],
  ["node", "--import", "tsx", "src/cli/main.ts"],
];

/** The CLI's arguments when the command runs the CLI, else undefined. Leading VAR=value words are skipped. */
export function cliArgs(words: readonly string[]): string[] | undefined {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++;
  const rest = words.slice(i);
  const prefix = CLI_PREFIXES.find((p) => p.every((w, k) => rest[k] === w));
  return prefix ? rest.slice(prefix.length) : undefined;
}
