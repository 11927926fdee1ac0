/**
 * `ping`: liveness and versions. Never touches the database, so it answers
 * even when the database is unusable.
 *
 * @module
 */

import { z } from "zod";
import { PACKAGE_VERSION, SPEC_VERSION } from "../../version.ts";
import { defineTool } from "../define_tool.ts";

/** The `ping` tool. */
export const pingTool = defineTool({
  name: "ping",
  title: "Ping",
  description: "Check that the agent bus server is alive and see its spec and package versions.",
  input: z.strictObject({}),
  output: z.object({
    ok: z.literal(true),
    spec_version: z.string(),
    package_version: z.string(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: false,
  run() {
    return {
      structured: {
        ok: true as const,
        spec_version: SPEC_VERSION,
        package_version: PACKAGE_VERSION,
      },
      text: `pong (${PACKAGE_VERSION}, spec ${SPEC_VERSION})`,
    };
  },
});
