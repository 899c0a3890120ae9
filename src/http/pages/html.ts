/**
 * @module http/pages/html
 * The small server-rendered pages (join, email-change confirmation): escaping, one
 * layout, and the headers every page carries. Plain HTML forms, no JavaScript, so
 * they work in any browser; the links carry secrets, hence no-referrer and no-store.
 */
import type { Reply } from "../respond.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:1rem 0 .25rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#b00020;font-weight:600}code{word-break:break-all;background:#f3f3f3;padding:.1rem .3rem}
dt{font-weight:600;margin-top:.75rem}dd{margin:0}`;

const HEADERS: readonly (readonly [string, string])[] = [
  ["Cache-Control", "no-store"],
  ["Referrer-Policy", "no-referrer"],
  ["X-Frame-Options", "DENY"],
  ["X-Content-Type-Options", "nosniff"],
  [
    "Content-Security-Policy",
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  ],
];

/** A whole page; `body` is trusted HTML (callers escape what they interpolate). */
export function page(
  status: number,
  title: string,
  body: string,
  extraHeaders: readonly (readonly [string, string])[] = [],
): Reply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>
`;
  return { status, body: html, contentType: "text/html; charset=utf-8", headers: [...HEADERS, ...extraHeaders] };
}
