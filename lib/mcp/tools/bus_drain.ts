/**
 * `bus.drain`: every message that arrived since the last drain, each
 * acknowledged as it is returned and never returned again.
 *
 * @module
 */

import { z } from "zod";
import { bodyJson, bodyOf, drainMail } from "../../bus/mail.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `bus.drain` tool. */
export const busDrainTool = defineTool({
  name: "bus.drain",
  title: "Drain inbound messages",
  description:
    "Take every message sent to you since the last drain, oldest first: [{id, from, source, " +
    "body}]. Each message is returned once. Call again while has_more is true.",
  input: z.strictObject({}),
  output: z.object({
    messages: z.array(z.object({
      id: z.string(),
      from: z.string(),
      source: z.string(),
      body: z.unknown(),
    })),
    has_more: z.boolean(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(_args, ctx) {
    const { messages, hasMore } = await drainMail(ctx.bus, requireAgent(ctx));
    // The text carries each body's stored JSON unchanged (structuredContent re-encodes it).
    const text = `[${
      messages.map((m) =>
        `{"id":${JSON.stringify(m.id)},"from":${JSON.stringify(m.from)},"source":${
          JSON.stringify(m.source)
        },"body":${bodyJson(m)}}`
      ).join(",")
    }]`;
    return {
      structured: {
        messages: messages.map((m) => ({
          id: m.id,
          from: m.from,
          source: m.source,
          body: bodyOf(m),
        })),
        has_more: hasMore,
      },
      text,
    };
  },
});
