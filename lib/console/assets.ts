/**
 * The web console's files, embedded in the program: our page, script and
 * styles, and the libraries it uses (marked for Markdown, DOMPurify to
 * sanitise it, highlight.js for code, Mermaid for diagrams), pinned in
 * `deno.json`. Each file is imported as text the first time it is asked
 * for, so a server that never serves the console never loads them (Mermaid
 * alone is 3.5 MB), and `deno compile` still embeds them all.
 *
 * @module
 */

/** One servable file. */
interface Asset {
  type: string;
  load: () => Promise<{ default: string }>;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

const ASSETS: Record<string, Asset> = {
  "/": {
    type: "text/html; charset=utf-8",
    load: () => import("./web/index.html", { with: { type: "text" } }),
  },
  "/assets/app.js": { type: JS, load: () => import("./web/app.js", { with: { type: "text" } }) },
  "/assets/markdown.js": {
    type: JS,
    load: () => import("./web/markdown.js", { with: { type: "text" } }),
  },
  "/assets/app.css": { type: CSS, load: () => import("./web/app.css", { with: { type: "text" } }) },
  "/assets/marked.js": {
    type: JS,
    load: () => import("./vendor/marked.js", { with: { type: "text" } }),
  },
  "/assets/purify.js": {
    type: JS,
    load: () => import("./vendor/purify.js", { with: { type: "text" } }),
  },
  "/assets/highlight.js": {
    type: JS,
    load: () => import("./vendor/highlight.js", { with: { type: "text" } }),
  },
  "/assets/highlight-light.css": {
    type: CSS,
    load: () => import("./vendor/highlight-light.css", { with: { type: "text" } }),
  },
  "/assets/highlight-dark.css": {
    type: CSS,
    load: () => import("./vendor/highlight-dark.css", { with: { type: "text" } }),
  },
  "/assets/mermaid.js": {
    type: JS,
    load: () => import("./vendor/mermaid.js", { with: { type: "text" } }),
  },
};

const cache = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();

/** True when `path` names an embedded file. */
export function isAsset(path: string): boolean {
  return Object.hasOwn(ASSETS, path);
}

/**
 * The file at `path` (see {@linkcode isAsset}), cached in memory once read.
 * Source-map comments are dropped: the maps are not embedded.
 */
export async function assetResponse(path: string, headers: HeadersInit): Promise<Response> {
  const asset = ASSETS[path]!;
  let body = cache.get(path);
  if (!body) {
    body = asset.load().then((module) =>
      new TextEncoder().encode(module.default.replace(/\n\/[/*]# sourceMappingURL=\S+\s*$/, "\n"))
    );
    cache.set(path, body);
  }
  return new Response(await body, {
    headers: {
      "content-type": asset.type,
      // Our own files change with the program; the pinned libraries never do.
      "cache-control": path.startsWith("/assets/") && !/\/(app|markdown)\./.test(path)
        ? "public, max-age=86400"
        : "no-cache",
      ...headers,
    },
  });
}
