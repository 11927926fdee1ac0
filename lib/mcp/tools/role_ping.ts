/**
 * `ping` of the teacher and student servers (seed 001): `{ok, role,
 * spec_version}`. Never touches the database.
 *
 * @module
 */

import { z } from "zod";
import { QA_SPEC_VERSION } from "../../version.ts";
import { defineTool, type ToolDefinition } from "../define_tool.ts";

/** The `ping` tool of a role server. */
export function rolePingTool(role: "teacher" | "student"): ToolDefinition {
  return defineTool({
    name: "ping",
    title: "Ping",
    description: `Check that the ${role} agent bus server is alive.`,
    input: z.strictObject({}),
    output: z.object({ ok: z.literal(true), role: z.literal(role), spec_version: z.string() }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    usesDb: false,
    run: () => ({
      structured: { ok: true as const, role, spec_version: QA_SPEC_VERSION },
      text: `pong (${role}, spec ${QA_SPEC_VERSION})`,
    }),
  });
}
