/**
 * AgentChatBus's message routes: a thread's messages (list, post,
 * transcript) and one message's reactions, edit and history.
 *
 * @module
 */

import { z } from "zod";
import { MAX_ATTACHMENTS } from "../../bus/chat/attachments.ts";
import { postMessage } from "../../bus/chat/post.ts";
import {
  editHistory,
  editMessageAsOperator,
  getMessage,
  listMessages,
  react,
  unreact,
} from "../../bus/chat/read.ts";
import {
  editedSchema,
  editHistorySchema,
  msgListInput,
  msgPostInput,
  postedSchema,
  reactedSchema,
  reactionInput,
  reactionSchema,
} from "../../bus/chat/schemas.ts";
import { threadSyncContext } from "../../bus/chat/threads.ts";
import type { Bus } from "../../bus/mod.ts";
import { Session } from "../../bus/session.ts";
import { BusError, invalidArgument } from "../../errors.ts";
import { json } from "../../http_respond.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";
import { restMessage, restMessageSchema } from "./shapes.ts";

/** Most tries of a REST post that brought no sync context and met a concurrent post. */
const AUTO_SYNC_TRIES = 3;

/** `GET /api/threads/{id}/messages`: `msg_list`'s arguments with REST's defaults. */
const messagesQuery = msgListInput.omit({
  thread_id: true,
  return_format: true,
  include_attachments: true,
}).extend({
  // (Larger limits are cut to 1000, as AgentChatBus does.)
  limit: z.int().min(1, "must be an int >= 1").default(200).transform((n) => Math.min(n, 1000)),
  include_system_prompt: z.boolean().default(false),
});

/** `GET /api/threads/{id}/transcript`: the same, with the transcript's larger page. */
const transcriptQuery = messagesQuery.extend({
  limit: z.int().min(1, "must be an int >= 1").default(400).transform((n) => Math.min(n, 2000)),
});

/** The message routes. */
export function messageRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/api/threads/{id}/messages",
      summary: "A thread's messages after after_seq (the msg_list tool, as JSON)",
      query: messagesQuery,
      responses: { "200": answer("An array of messages", z.array(restMessageSchema)) },
      handle: ({ params: { id }, query }) => messagesResponse(bus, id!, query),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/messages",
      summary: "Post to a thread (the msg_post tool); without expected_last_seq and reply_token " +
        "the server issues a sync context for the post; images are kept as attachments and " +
        "listed in metadata.images",
      body: msgPostInput(bus.config).omit({ thread_id: true }).extend({
        author: msgPostInput(bus.config).shape.author.default("human"),
        images: z.array(z.record(z.string(), z.unknown())).max(MAX_ATTACHMENTS).optional()
          .describe(
            "Images as AgentChatBus's chat panel sends them ({url: data URL from " +
              "/api/upload/image, name}); kept as the message's attachments",
          ),
      }),
      responses: {
        "201": answer("The stored message", restMessageSchema.extend(postedSchema.shape)),
      },
      handle: async ({ params: { id }, body }) => await post(bus, id!, body),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/transcript",
      summary: "The human view of a thread: its messages (there are no human-only entries here)",
      query: transcriptQuery,
      responses: { "200": answer("An array of messages", z.array(restMessageSchema)) },
      handle: ({ params: { id }, query }) => messagesResponse(bus, id!, query),
    }),
    route({
      method: "GET",
      path: "/api/messages/{id}/reactions",
      summary: "A message's reactions",
      responses: { "200": answer("{reactions}", z.object({ reactions: z.array(reactionSchema) })) },
      handle: ({ params: { id } }) => json({ reactions: requireChatMessage(bus, id!).reactions }),
    }),
    route({
      method: "POST",
      path: "/api/messages/{id}/reactions",
      summary: "React to a message for agent_id (the msg_react tool; without a token the " +
        "operator reacts for the agent, as AgentChatBus's REST does)",
      body: reactionInput.omit({ message_id: true }).required({ agent_id: true }),
      responses: {
        "201": answer(
          "{ok, reaction, reactions}",
          reactedSchema.extend({ ok: z.literal(true), reactions: z.array(reactionSchema) }),
        ),
      },
      handle: async ({ params: { id }, body }) => {
        const reaction = await react(bus, new Session({}), {
          ...body,
          message_id: id!,
          asOperator: true,
        });
        const { reactions } = requireChatMessage(bus, id!);
        return json({ ok: true, ...reaction, reactions }, 201);
      },
    }),
    route({
      method: "DELETE",
      path: "/api/messages/{id}/reactions/{reaction}",
      summary: "Take back agent_id's reaction (the msg_unreact tool)",
      query: reactionInput.pick({ agent_id: true, token: true }).required({ agent_id: true }),
      responses: { "200": answer("{removed}", z.object({ removed: z.boolean() })) },
      handle: async ({ params: { id, reaction }, query }) => {
        const removed = await unreact(bus, new Session({}), {
          ...query,
          message_id: id!,
          reaction: reaction!,
          asOperator: true,
        });
        return json({ removed: removed.removed });
      },
    }),
    route({
      method: "PUT",
      path: "/api/messages/{id}",
      summary: "Edit a message for edited_by, its author or system (the msg_edit tool); " +
        "new_content, or content as AgentChatBus's reference names it",
      body: editBody(bus),
      responses: {
        "200": answer("{msg_id, version, edited_at, edited_by} or {no_change}", editedSchema),
      },
      handle: async ({ params: { id }, body }) => {
        const content = body.new_content ?? body.content;
        if (content === undefined) throw invalidArgument("new_content is required");
        return json(
          await editMessageAsOperator(bus, {
            message_id: id!,
            new_content: content,
            edited_by: body.edited_by,
          }),
        );
      },
    }),
    route({
      method: "GET",
      path: "/api/messages/{id}/history",
      summary: "A message's earlier versions, oldest first (the msg_edit_history tool)",
      responses: { "200": answer("{edits}", editHistorySchema) },
      handle: ({ params: { id } }) => json(editHistory(bus, id!)),
    }),
  ];
  return routes as RouteSpec[];
}

/** `PUT /api/messages/{id}`: the new text (under either name) and who edits. */
function editBody(bus: Bus) {
  const text = z.string().min(1, "must be a non-empty string").max(bus.config.maxMessageChars);
  return z.object({
    new_content: text.optional(),
    content: text.optional().describe("AgentChatBus's reference's name of new_content"),
    edited_by: z.string().min(1).max(200).default("system"),
  });
}

/** A page of a thread's messages, as AgentChatBus's REST lists them (a bare array). */
function messagesResponse(
  bus: Bus,
  threadId: string,
  query: z.output<typeof messagesQuery>,
): Response {
  const { messages } = listMessages(bus, {
    ...query,
    thread_id: threadId,
    include_attachments: false,
  });
  return json(messages.map(({ message }) => restMessage(message)));
}

/** A chatbus message, or `MESSAGE_NOT_FOUND`. */
function requireChatMessage(bus: Bus, messageId: string) {
  const found = getMessage(bus, messageId);
  if (!found.found) {
    throw new BusError("MESSAGE_NOT_FOUND", `Message '${messageId}' not found`);
  }
  return found.message;
}

type PostBody = Omit<z.output<ReturnType<typeof msgPostInput>>, "thread_id"> & {
  images?: Record<string, unknown>[] | undefined;
};

/**
 * A REST post: with the caller's sync context when it brings one, else with
 * one issued for it (tried again, a few times, when another post came in
 * between), as AgentChatBus does so that a person or a script can always post.
 */
async function post(bus: Bus, threadId: string, body: PostBody): Promise<Response> {
  if (body.role === "system" && body.author === "human") {
    throw invalidArgument("role 'system' is not allowed for human messages");
  }
  const { images, ...fields } = body;
  // (The images join the attachments, under the same rules as msg_post's.)
  const metadata = images === undefined ? body.metadata : {
    ...body.metadata,
    attachments: [...(body.metadata?.attachments ?? []), ...images],
  };
  const session = new Session({});
  const brought = body.expected_last_seq !== undefined && body.reply_token !== undefined;
  for (let attempt = 1;; attempt++) {
    const sync = brought ? undefined : await threadSyncContext(bus, session, threadId);
    try {
      const posted = await postMessage(bus, session, {
        ...fields,
        metadata,
        thread_id: threadId,
        asOperator: true,
        expected_last_seq: sync?.current_seq ?? body.expected_last_seq,
        reply_token: sync?.reply_token ?? body.reply_token,
      });
      const message = requireChatMessage(bus, posted.msg_id);
      return json({ ...restMessage(message), ...posted }, 201);
    } catch (error) {
      const raced = error instanceof BusError && error.code === "SeqMismatchError";
      if (brought || !raced || attempt >= AUTO_SYNC_TRIES) throw error;
    }
  }
}
