/**
 * @module markdown/code
 * Code blocks in Zulip's `codehilite` markup. Zulip highlights with Pygments and
 * records the language as Pygments' display name in `data-code-language`; clients
 * key "view in playground" and copy features off that name, so common aliases are
 * canonicalised the same way. No highlighting is done: the code is escaped text.
 */
import type { Token } from "markdown-it";
import { escapeAttr } from "./escape.js";
import { mathBlockHtml } from "./math.js";

/** Language (lower-cased alias) → Pygments lexer name, for the languages people use most. */
const LANGUAGE_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    python: "Python",
    py: "Python",
    python3: "Python",
    py3: "Python",
    py2: "Python 2.x",
    python2: "Python 2.x",
    javascript: "JavaScript",
    js: "JavaScript",
    typescript: "TypeScript",
    ts: "TypeScript",
    jsx: "JSX",
    tsx: "TSX",
    java: "Java",
    c: "C",
    "c++": "C++",
    cpp: "C++",
    "c#": "C#",
    csharp: "C#",
    go: "Go",
    golang: "Go",
    rust: "Rust",
    rs: "Rust",
    ruby: "Ruby",
    rb: "Ruby",
    php: "PHP",
    bash: "Bash",
    sh: "Bash",
    shell: "Bash",
    zsh: "Bash",
    console: "Bash Session",
    json: "JSON",
    yaml: "YAML",
    yml: "YAML",
    toml: "TOML",
    html: "HTML",
    xml: "XML",
    css: "CSS",
    scss: "SCSS",
    sql: "SQL",
    kotlin: "Kotlin",
    swift: "Swift",
    scala: "Scala",
    haskell: "Haskell",
    hs: "Haskell",
    elixir: "Elixir",
    erlang: "Erlang",
    lua: "Lua",
    perl: "Perl",
    r: "R",
    markdown: "Markdown",
    md: "Markdown",
    tex: "TeX",
    latex: "TeX",
    diff: "Diff",
    dockerfile: "Docker",
    docker: "Docker",
    text: "Text only",
  }),
);

/** The `data-code-language` value: Pygments' name if known, else the tag as written (as Zulip does). */
export function codeLanguageName(lang: string): string {
  return LANGUAGE_NAMES.get(lang.toLowerCase()) ?? lang;
}

/** The language tag of a fence info string (`{.python}`, `.python` and `python x` all give `python`). */
export function fenceLanguage(info: string): { readonly lang: string; readonly rest: string } {
  const trimmed = info.trim();
  const match = /^\{?\.?([^\s{}]*)\}?\s*(.*)$/s.exec(trimmed);
  return { lang: match?.[1] ?? "", rest: match?.[2] ?? "" };
}

/**
 * Pygments drops leading/trailing blank lines and Zulip strips trailing
 * whitespace on each line; the result always ends in one newline.
 */
function normaliseCode(code: string): string {
  const lines = code.split("\n").map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return `${lines.join("\n")}\n`;
}

export function codeBlockHtml(code: string, lang: string): string {
  const languageAttr = lang === "" ? "" : ` data-code-language="${escapeAttr(codeLanguageName(lang))}"`;
  // Pygments escapes quotes too, hence escapeAttr for the body.
  return `<div class="codehilite"${languageAttr}><pre><span></span><code>${escapeAttr(normaliseCode(code))}</code></pre></div>\n`;
}

/** Renderer rule for ``` and ~~~ fences. */
export function renderFence(tokens: Token[], idx: number): string {
  const token = tokens[idx];
  if (!token) return "";
  const { lang } = fenceLanguage(token.info);
  // Zulip's fence handler takes only `math` as TeX (`tex` and `latex` are code).
  if (lang.toLowerCase() === "math") return mathBlockHtml(token.content);
  return codeBlockHtml(token.content, lang);
}

/** Renderer rule for four-space-indented code. */
export function renderIndentedCode(tokens: Token[], idx: number): string {
  return codeBlockHtml(tokens[idx]?.content ?? "", "");
}
