/**
 * The web console's vendored libraries: each file in `lib/console/vendor/`
 * and the file of the npm package pinned in `deno.json` it copies. Shared by
 * `deno task vendor` (which writes them) and the test that proves they are
 * unchanged.
 *
 * @module
 */

/** Where the vendored files live. */
export const VENDOR = new URL("../lib/console/vendor/", import.meta.url);

/** Each vendored file and how to load the pinned package file it copies. */
export const VENDORED: readonly [name: string, load: () => Promise<{ default: string }>][] = [
  ["marked.js", () => import("marked", { with: { type: "text" } })],
  ["purify.js", () => import("dompurify/dist/purify.min.js", { with: { type: "text" } })],
  [
    "highlight.js",
    () => import("@highlightjs/cdn-assets/highlight.min.js", { with: { type: "text" } }),
  ],
  [
    "highlight-light.css",
    () => import("@highlightjs/cdn-assets/styles/github.min.css", { with: { type: "text" } }),
  ],
  [
    "highlight-dark.css",
    () => import("@highlightjs/cdn-assets/styles/github-dark.min.css", { with: { type: "text" } }),
  ],
  ["mermaid.js", () => import("mermaid/dist/mermaid.min.js", { with: { type: "text" } })],
];
