/**
 * The README is a front door: short, opening with the two commands that set
 * everything up on a fresh machine, and every link in it and in `docs/`
 * leads somewhere (a file of the repository, and a heading there when the
 * link names one).
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const README = `${ROOT}README.md`;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replaceAll(" ", "-");
}

/** The anchors of a Markdown file's headings (outside code blocks). */
function anchorsIn(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(anchorOf(heading[1]!));
  }
  return anchors;
}

/** The relative links of a Markdown file (outside code blocks): `[label](target)`. */
function linksIn(text: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/.test(match[1]!)) links.push(match[1]!);
    }
  }
  return links;
}

Deno.test("the README is at most 300 lines and opens with the two set-up commands", async () => {
  const readme = await Deno.readTextFile(README);
  const lines = readme.split("\n");
  assert.ok(lines.length <= 300, `${lines.length} lines`);
  const opening = /```sh\n([^`]*)```/.exec(readme)?.[1]?.trim().split("\n") ?? [];
  assert.deepEqual(opening.map((line) => line.split("#")[0]!.trim()), [
    "npx -y deno@2.9.6 task serve",
    "npx -y deno@2.9.6 task test",
  ]);
});

Deno.test("every link in the README and docs/ leads to a file, and to a heading it names", async () => {
  const files = [README];
  for await (const entry of Deno.readDir(`${ROOT}docs`)) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(`${ROOT}docs/${entry.name}`);
  }
  const broken: string[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    const dir = file.slice(0, file.lastIndexOf("/") + 1);
    for (const link of linksIn(text)) {
      const [path, anchor] = link.split("#", 2) as [string, string | undefined];
      const target = path === "" ? file : new URL(path, `file://${dir}`).pathname;
      const where = `${file.slice(ROOT.length)}: ${link}`;
      const stat = await Deno.stat(decodeURIComponent(target)).catch(() => undefined);
      if (!stat) {
        broken.push(`${where} (no such file)`);
      } else if (anchor !== undefined && target.endsWith(".md")) {
        if (!anchorsIn(await Deno.readTextFile(target)).has(anchor)) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});
