/**
 * Code block highlighting, in its own chunk: loaded the first time a message with a
 * code block is drawn (rich-content.ts), never on the first view otherwise. The server
 * marks blocks as Zulip's does (`div.codehilite` with Pygments' language name in
 * data-code-language); highlight.js core with the languages people write most colours
 * them (its output is escaped text in spans, so no markup of the message gets through).
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, diff, go, java, javascript, json, kotlin, markdown, php, python, ruby, rust };
for (const [name, language] of Object.entries({ ...LANGUAGES, shell, sql, typescript, xml, yaml }))
  hljs.registerLanguage(name, language);

/** Pygments' names (src/markdown/code.ts) that are not highlight.js's own names or aliases. */
const FROM_PYGMENTS: Readonly<Record<string, string>> = {
  "Python 2.x": "python",
  "C++": "cpp",
  "Bash Session": "shell",
  HTML: "xml",
  JSX: "javascript",
  TSX: "typescript",
  Docker: "bash",
};

function languageOf(codeLanguage: string): string | null {
  const name = FROM_PYGMENTS[codeLanguage] ?? codeLanguage.toLowerCase();
  return hljs.getLanguage(name) ? name : null;
}

/** Colours every code block under `root` whose language is known (once each). */
export function highlightCode(root: ParentNode): void {
  for (const block of root.querySelectorAll<HTMLElement>("div.codehilite[data-code-language]")) {
    const code = block.querySelector("code");
    const language = languageOf(block.dataset["codeLanguage"] ?? "");
    if (!code || language === null || code.classList.contains("hljs")) continue;
    const { value } = hljs.highlight(code.textContent ?? "", { language, ignoreIllegals: true });
    code.innerHTML = value;
    code.classList.add("hljs", `language-${language}`);
  }
}
