/**
 * The web console's libraries are vendored in `lib/console/vendor/` (so the
 * stdio server's module graph holds no npm package it never uses, and the
 * compiled binary embeds them as plain files). This test proves each file
 * is byte for byte the one in the npm package pinned in `deno.json`;
 * `deno task vendor` rewrites them from those packages after a version bump.
 */

import assert from "node:assert/strict";

const VENDOR = new URL("../../lib/console/vendor/", import.meta.url);
const update = Deno.env.get("AGENT_BUS_UPDATE_VENDOR") === "1";

/** Each vendored file and the pinned package file it copies. */
const FILES: [name: string, load: () => Promise<{ default: string }>][] = [
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

Deno.test("vendored console libraries are the pinned npm packages' files, unchanged", async () => {
  for (const [name, load] of FILES) {
    const pinned = (await load()).default;
    const file = new URL(name, VENDOR);
    if (update) await Deno.writeTextFile(file, pinned);
    assert.equal(await Deno.readTextFile(file), pinned, `${name} differs from its npm package`);
  }
});
