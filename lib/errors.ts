/**
 * The one error type of agent-bus.
 *
 * A `BusError` carries a wire code from the seed contracts plus optional
 * context that tools copy into `structuredContent` beside `error`. Anything
 * that is not a `BusError` is a bug, and the tool adapter reports it as
 * `INTERNAL_ERROR` without leaking its details to the client.
 *
 * @module
 */

/** Error codes that cross the wire. The first seven are Agent Bus v6.3's own. */
export type ErrorCode =
  | "TOPIC_NOT_FOUND"
  | "TOPIC_CLOSED"
  | "AGENT_NAME_IN_USE"
  | "INVALID_ARGUMENT"
  | "DB_BUSY"
  | "DB_SCHEMA_MISMATCH"
  | "AGENT_NOT_JOINED"
  /** Teacher/student (seed 001): no question with this id. */
  | "QUESTION_NOT_FOUND"
  /** Teacher/student (seed 001): the question belongs to another topic. */
  | "TOPIC_MISMATCH"
  /** A recipient's mailbox holds AGENT_BUS_MAX_MAILBOX_DEPTH unread messages; nothing was sent. */
  | "MAILBOX_FULL"
  /** The database file cannot be opened, read or written (permissions, missing disk, not SQLite). */
  | "DB_UNAVAILABLE"
  /** A bug on our side; details go to the log, not to the client. */
  | "INTERNAL_ERROR"
  /** HTTP only: no such route. */
  | "NOT_FOUND"
  /** HTTP only: a bearer token is required and was missing or wrong. */
  | "UNAUTHORIZED"
  /** HTTP only: the Host or Origin is not allowed. */
  | "FORBIDDEN"
  /** HTTP only: the route exists, not with this method. */
  | "METHOD_NOT_ALLOWED"
  /** HTTP only: a body that is not `application/json`. */
  | "UNSUPPORTED_MEDIA_TYPE"
  /** HTTP only: a body larger than the largest legitimate request. */
  | "PAYLOAD_TOO_LARGE"
  /** Chatbus (seed 002) codes, named as AgentChatBus names them: no thread with this id. */
  | "THREAD_NOT_FOUND"
  /** Chatbus: the thread is closed and takes no messages. */
  | "THREAD_CLOSED"
  /** Chatbus: no message with this id. */
  | "MESSAGE_NOT_FOUND"
  /** Chatbus: no template with this id. */
  | "TEMPLATE_NOT_FOUND"
  /** Chatbus: another thread has this topic already (a rename). */
  | "THREAD_TOPIC_IN_USE"
  /** Chatbus: the call needs an agent's id and token, and they were missing or wrong. */
  | "AUTHENTICATION_REQUIRED"
  /** Chatbus: `msg_wait` got only one of agent_id and token, or a wrong pair. */
  | "InvalidCredentials"
  /** Chatbus: only the author (or `system`) may edit a message. */
  | "PermissionError"
  /** Chatbus sync protocol: `msg_post` without `expected_last_seq` and `reply_token`. */
  | "MissingSyncFieldsError"
  /** Chatbus sync protocol: a reply token of another thread or agent, or unknown. */
  | "ReplyTokenInvalidError"
  /** Chatbus sync protocol: a reply token that was already used. */
  | "ReplyTokenReplayError"
  /** Chatbus sync protocol: messages arrived after `expected_last_seq`; they come with the error. */
  | "SeqMismatchError"
  /** Chatbus: the text holds a credential (AgentChatBus's content filter; `AGENT_BUS_SECRETS`). */
  | "ContentFilterError";

/** A domain error with a stable code; `context` is merged into the tool's structured output. */
export class BusError extends Error {
  readonly code: ErrorCode;
  readonly context: Record<string, unknown> | undefined;

  /**
   * @param code the wire code
   * @param message a sentence for a human or a model, saying what to do
   * @param options `context` for extra structured fields, `cause` for the underlying error
   */
  constructor(
    code: ErrorCode,
    message: string,
    options?: { context?: Record<string, unknown>; cause?: unknown },
  ) {
    super(message, { cause: options?.cause });
    this.name = this.constructor.name;
    this.code = code;
    this.context = options?.context;
  }
}

/** A note on a successful result (`structuredContent.warnings[]`): done, but not quite as asked. */
export interface Warning {
  code: string;
  message?: string;
  context?: Record<string, unknown>;
}

/** Shorthand for the most common error: a bad argument. */
export function invalidArgument(message: string): BusError {
  return new BusError("INVALID_ARGUMENT", message);
}

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOPIC_NOT_FOUND: 404,
  QUESTION_NOT_FOUND: 404,
  TOPIC_CLOSED: 409,
  TOPIC_MISMATCH: 409,
  AGENT_NAME_IN_USE: 409,
  AGENT_NOT_JOINED: 409,
  MAILBOX_FULL: 429,
  DB_BUSY: 503,
  DB_UNAVAILABLE: 503,
  THREAD_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  THREAD_CLOSED: 409,
  THREAD_TOPIC_IN_USE: 409,
  AUTHENTICATION_REQUIRED: 401,
  InvalidCredentials: 401,
  PermissionError: 403,
  MissingSyncFieldsError: 400,
  ReplyTokenInvalidError: 400,
  ReplyTokenReplayError: 400,
  SeqMismatchError: 409,
  ContentFilterError: 400,
};

/** The HTTP status that stands for an error code (500 for anything unexpected). */
export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code] ?? 500;
}
