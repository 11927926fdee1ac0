/**
 * `ping`: liveness, versions, and the state of the semantic index as this
 * process last saw it. Never touches the database, so it answers even when
 * the database is unusable.
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
  description:
    "Check that the agent bus server is alive; see its spec and package versions and the state " +
    "of the semantic search index.",
  input: z.strictObject({}),
  output: z.object({
    ok: z.literal(true),
    spec_version: z.string(),
    package_version: z.string(),
    semantic_index: z.object({
      model: z.string(),
      state: z.string(),
      indexed: z.int(),
      failed: z.int(),
      backlog: z.int(),
      endpoint: z.object({ url: z.string(), state: z.string(), error: z.string().optional() }),
    }),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: false,
  run(_args, { search }) {
    const index = search.status();
    const endpoint: { url: string; state: string; error?: string } = {
      url: index.endpoint.url,
      state: index.endpoint.state,
    };
    if (index.endpoint.error) endpoint.error = index.endpoint.error;
    return {
      structured: {
        ok: true as const,
        spec_version: SPEC_VERSION,
        package_version: PACKAGE_VERSION,
        semantic_index: {
          model: index.model,
          state: index.state,
          indexed: index.indexed,
          failed: index.failed,
          backlog: index.backlog,
          endpoint,
        },
      },
      text: `pong (${PACKAGE_VERSION}, spec ${SPEC_VERSION}); semantic index: ${index.state}, ` +
        `${index.indexed} indexed, ${index.backlog} waiting (model ${index.model}, endpoint ` +
        `${index.endpoint.url} ${index.endpoint.state})`,
    };
  },
});
