/**
 * Human-readable tool text.
 *
 * Many clients show a model only the text part of a result, so the text
 * carries everything an agent needs to act: ids, seqs, and whole message
 * bodies (the bus keeps a result within its size budget by returning fewer
 * messages, never by cutting one).
 *
 * @module
 */

import type { Message } from "../bus/messages.ts";

/** Length of a body preview when whole bodies are turned off. */
export const PREVIEW_CHARS = 80;

/** A message as a header line and its whole body (or a one-line preview). */
export function renderMessage(message: Message, options: { includeBody: boolean }): string {
  const reply = message.reply_to ? ` reply_to=${message.reply_to}` : "";
  const header =
    `[${message.seq}] ${message.sender} (${message.message_type}) id=${message.message_id}${reply}`;
  const body = options.includeBody
    ? message.content_markdown
    : oneLine(message.content_markdown, PREVIEW_CHARS);
  return `${header}\n${body}`;
}

/** The first `max` characters of `text` on one line. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** A double-quoted value for key="value" pairs. */
export function quote(value: string): string {
  return JSON.stringify(value);
}
