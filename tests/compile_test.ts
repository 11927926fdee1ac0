/**
 * `deno task compile` builds a standalone binary that serves MCP.
 *
 * `deno compile` downloads the `denort` runtime; on a machine that cannot
 * reach dl.deno.land the test is skipped, and its name says why.
 */

import assert from "node:assert/strict";
import { startHttpServer } from "./_helpers/http.ts";
import { MAIN, startPeer } from "./_helpers/peer.ts";
import { tmpDir } from "./_helpers/tmp.ts";
import denoJson from "../deno.json" with { type: "json" };

const outDir = await Deno.makeTempDir({ prefix: "agent-bus-compile-" });
const binary = `${outDir}/agent-bus${Deno.build.os === "windows" ? ".exe" : ""}`;
// The task's own flags, with the output redirected to a temp dir.
const taskArgs = denoJson.tasks.compile.command.split(/\s+/).slice(1)
  .map((arg) => arg === "dist/agent-bus" ? binary : arg === "main.ts" ? MAIN : arg);
const compiled = await new Deno.Command(Deno.execPath(), {
  args: taskArgs,
  stdout: "piped",
  stderr: "piped",
}).output();
const compileLog = new TextDecoder().decode(compiled.stderr);
const noDenort = !compiled.success &&
  /denort|dl\.deno\.land|error sending request|dns error/i.test(compileLog);

Deno.test({
  name: noDenort
    ? "deno task compile: SKIPPED, the denort runtime cannot be downloaded on this machine"
    : "deno task compile builds a binary that answers over MCP without Deno",
  ignore: noDenort,
  async fn() {
    try {
      assert.ok(compiled.success, compileLog);
      const version = await new Deno.Command(binary, { args: ["--version"], stdout: "piped" })
        .output();
      assert.equal(
        new TextDecoder().decode(version.stdout).trim(),
        `agent-bus ${denoJson.version}`,
      );
      await using tmp = await tmpDir();
      await using peer = await startPeer({ dbPath: `${tmp.path}/bus.sqlite`, command: binary });
      assert.equal((await peer.ok("ping")).ok, true);
      assert.equal((await peer.ok("topic_create", { name: "compiled" })).name, "compiled");
      // The web console and its libraries are embedded: no files beside the binary.
      await using http = await startHttpServer({
        dbPath: `${tmp.path}/bus.sqlite`,
        command: binary,
      });
      for (const path of ["/", "/assets/app.js", "/assets/mermaid.js"]) {
        const response = await fetch(`${http.url}${path}`);
        assert.equal(response.status, 200, path);
        assert.ok((await response.text()).length > 1000, path);
      }
    } finally {
      await Deno.remove(outDir, { recursive: true });
    }
  },
});

if (noDenort) await Deno.remove(outDir, { recursive: true });
