/**
 * A seventh profile, defined in the test tree only: two tools and one
 * feature, to show that a new dialect is one file, served by the stdio and
 * HTTP transports with nothing changed under `lib/`.
 *
 * @module
 */

import { z } from "zod";
import { defineTool } from "../../lib/mcp/define_tool.ts";
import type { Feature } from "../../lib/mcp/features/mod.ts";
import type { Profile } from "../../lib/mcp/profiles/mod.ts";
import { pingTool } from "../../lib/mcp/tools/ping.ts";

const echoTool = defineTool({
  name: "seventh_echo",
  title: "Echo",
  description: "Say the text back.",
  input: z.strictObject({ text: z.string() }),
  output: z.object({ text: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: false,
  run: (args) => ({ structured: { text: args.text }, text: args.text }),
});

/** A feature that only announces itself. */
const announced: Feature = {
  name: "seventh announcement",
  capabilities: () => ({ experimental: { "seventh/hello": {} } }),
  attach: () => () => {},
};

/** The test-only seventh profile. */
export const seventh: Profile = {
  name: "seventh",
  isRole: false,
  tools: [pingTool, echoTool],
  instructions: "The seventh profile: ping and echo.",
  features: [announced],
  agent: "ignored",
  install: undefined,
  stdio: { recordSession: false, registerPeer: false },
  hooks: { mail: false, questionQueue: false },
  http: { atMcp: true, jsonResponse: false },
};
