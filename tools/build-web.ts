/**
 * @module tools/build-web
 * Bundles the web client (web/src/main.ts and its CSS) with esbuild into dist/web:
 * content-hashed app-HASH.js / app-HASH.css (served as immutable) and index.html
 * (revalidated) naming them. Run by `npm run build` after tsc; tests call buildWeb()
 * with a directory of their own. No type checking here: `tsc -p web/tsconfig.json`
 * (in `npm run typecheck` and `npm test`) does that.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { EMOJI_SPRITE_MODULE, emojiSpriteCss } from "./emoji-sprite.js";

/** The repository root: this file is tools/build-web.ts, or dist/tools/build-web.js once compiled. */
function repoRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return basename(dirname(here)) === "dist" ? join(here, "..", "..") : join(here, "..");
}

/** The generated emoji stylesheet (tools/emoji-sprite.ts) as an importable module. */
const emojiSprite: Plugin = {
  name: "emoji-sprite",
  setup(b) {
    b.onResolve({ filter: /^parley:emoji-sprite\.css$/ }, () => ({ path: EMOJI_SPRITE_MODULE, namespace: "parley" }));
    b.onLoad({ filter: /.*/, namespace: "parley" }, () => {
      const { css, resolveDir } = emojiSpriteCss();
      return { contents: css, loader: "css", resolveDir };
    });
  },
};

export interface WebBuild {
  readonly outDir: string;
  readonly files: readonly string[];
  readonly bytes: number;
}

export async function buildWeb(outDir = join(repoRoot(), "dist", "web")): Promise<WebBuild> {
  const root = repoRoot();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // KaTeX's stylesheet and fonts first, on their own (fetched only once a formula is
  // shown): the app learns the stylesheet's hashed name through PARLEY_KATEX_CSS.
  const katex = await build({
    entryPoints: { katex: createRequire(import.meta.url).resolve("katex/dist/katex.min.css") },
    bundle: true,
    minify: true,
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" },
    outdir: outDir,
    metafile: true,
    logLevel: "warning",
  });
  const katexOutputs = Object.keys(katex.metafile.outputs).map((p) => basename(p));
  const katexCss = katexOutputs.find((f) => f.endsWith(".css"));
  if (!katexCss) throw new Error(`KaTeX stylesheet not built: ${katexOutputs.join(", ")}`);
  // The code highlighter on its own too, imported by URL the first time a code block is
  // drawn: as a split chunk it would share esbuild's module helpers with the app, one
  // more request on every first view.
  const highlight = await build({
    entryPoints: { highlight: join(root, "web", "src", "highlight.ts") },
    bundle: true,
    minify: true,
    sourcemap: "linked",
    format: "esm",
    target: "es2022",
    entryNames: "[name]-[hash]",
    outdir: outDir,
    metafile: true,
    logLevel: "warning",
  });
  const highlightOutputs = Object.keys(highlight.metafile.outputs).map((p) => basename(p));
  const highlightJs = highlightOutputs.find((f) => f.endsWith(".js"));
  if (!highlightJs) throw new Error(`highlighter not built: ${highlightOutputs.join(", ")}`);
  const result = await build({
    entryPoints: { app: join(root, "web", "src", "main.ts") },
    bundle: true,
    minify: true,
    sourcemap: "linked",
    format: "esm",
    target: "es2022",
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    define: { PARLEY_KATEX_CSS: JSON.stringify(katexCss), PARLEY_HIGHLIGHT_JS: JSON.stringify(highlightJs) },
    loader: { ".png": "file" },
    plugins: [emojiSprite],
    outdir: outDir,
    metafile: true,
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.startsWith("app-") && f.endsWith(".js"));
  const css = outputs.find((f) => f.startsWith("app-") && f.endsWith(".css"));
  if (!js || !css) throw new Error(`web build produced no script or stylesheet: ${outputs.join(", ")}`);
  const html = readFileSync(join(root, "web", "index.html"), "utf8")
    .replace("%APP_JS%", js)
    .replace("%APP_CSS%", css);
  writeFileSync(join(outDir, "index.html"), html);
  copyFileSync(join(root, "web", "favicon.svg"), join(outDir, "favicon.svg"));
  const files = [...outputs, ...katexOutputs, ...highlightOutputs, "index.html", "favicon.svg"];
  const bytes = [result, katex, highlight]
    .flatMap((r) => Object.values(r.metafile.outputs))
    .reduce((n, o) => n + o.bytes, Buffer.byteLength(html));
  return { outDir, files, bytes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const out = await buildWeb();
  console.log(
    `web client: ${out.files.length} files, ${(out.bytes / 1024).toFixed(1)} KiB in ${out.outDir} (${Math.round(performance.now() - started)} ms)`,
  );
}
