/**
 * Direct mail between agents (seeds 003 and 004, one shared mailbox).
 *
 * An agent's mailbox is FIFO. Sending is idempotent by message id (a retry
 * with the same id from the same sender is a no-op), and a recipient's
 * mailbox holds at most `AGENT_BUS_MAX_MAILBOX_DEPTH` unread messages:
 * beyond that a send fails with `MAILBOX_FULL` and stores nothing. Popping
 * marks and returns in one statement inside `BEGIN IMMEDIATE`, so across
 * any number of processes each message is delivered exactly once.
 *
 * Mail sent over HTTP carries text; mail sent by peer-bus servers carries
 * a JSON body, kept verbatim. Either side reads both: text arrives at a
 * peer-bus server as a JSON string, JSON arrives over HTTP as its text.
 *
 * Running peer-bus servers register their name with a lease
 * ({@linkcode PeerRegistration}); a broadcast reaches every registered peer
 * but the sender, and a peer that dies drops out when its lease lapses.
 *
 * @module
 */

import { ITEM_OVERHEAD_BYTES } from "../budget.ts";
import { BusError, invalidArgument } from "../errors.ts";
import {
  getMail,
  hasUnread,
  insertMail,
  livePeers,
  mailboxTotals,
  type MailRow,
  nameUsed,
  peekMail,
  popMail,
  registerPeer,
  unreadCount,
  unregisterPeer,
} from "../store/mail.ts";
import { type Bus, write } from "./mod.ts";
import { screenSecrets } from "./secrets.ts";
import { cleanName } from "./validate.ts";

/** Longest mail agent name. */
export const MAX_MAIL_AGENT_CHARS = 64;
/** Longest caller-chosen message id. */
export const MAX_MAIL_ID_CHARS = 128;
/** Most messages one drain returns. */
export const MAX_DRAIN = 1000;

const URL_SAFE = /^[A-Za-z0-9._~-]+$/;

/** Where a message was sent from. */
export type MailSource = "http" | "peer-bus" | "cli";

/** A message as stored, in the shape both sides share. */
export interface Mail {
  id: string;
  from: string;
  to: string;
  /** Text, or the JSON text of a JSON body. */
  content: string;
  format: "text" | "json";
  source: string;
  created: number;
}

/**
 * An agent name fit for a URL path segment: non-empty, at most 64
 * characters of letters, digits, `.`, `_`, `~` and `-`.
 *
 * @throws {BusError} `INVALID_ARGUMENT`
 */
export function cleanMailAgent(name: string, field: string): string {
  const trimmed = cleanName(name, field, MAX_MAIL_AGENT_CHARS);
  if (!URL_SAFE.test(trimmed)) {
    throw invalidArgument(
      `${field} "${trimmed}" may only contain letters, digits, ".", "_", "~" and "-"`,
    );
  }
  return trimmed;
}

/**
 * Send one message. A retry with the same `id` from the same sender stores
 * nothing and returns the id again.
 *
 * @throws {BusError} `INVALID_ARGUMENT`, `MAILBOX_FULL`
 */
export async function sendMail(
  bus: Bus,
  mail: {
    from: string;
    to: string;
    content: string;
    format: "text" | "json";
    source: MailSource;
    id?: string | undefined;
  },
): Promise<{ id: string; duplicate: boolean }> {
  const from = cleanMailAgent(mail.from, "from");
  const to = cleanMailAgent(mail.to, "name");
  const content = checkContent(bus, mail);
  const id = mail.id === undefined
    ? crypto.randomUUID()
    : cleanName(mail.id, "msg_id", MAX_MAIL_ID_CHARS);
  return await write(bus, () => {
    const existing = getMail(bus.store, id);
    if (existing) {
      if (existing.from_agent !== from) {
        throw invalidArgument(
          `msg_id "${id}" is already used by another sender; choose another id`,
        );
      }
      return { id, duplicate: true };
    }
    ensureRoom(bus, to);
    insertMail(bus.store, {
      id,
      from_agent: from,
      to_agent: to,
      content,
      created: bus.now(),
      source: mail.source,
      format: mail.format,
    });
    return { id, duplicate: false };
  });
}

/**
 * Send one message to every registered peer but the sender (no backfill
 * for peers that register later). All or nothing.
 *
 * @throws {BusError} `INVALID_ARGUMENT`, `MAILBOX_FULL`
 */
export async function broadcastMail(
  bus: Bus,
  mail: { from: string; content: string; format: "text" | "json"; source: MailSource },
): Promise<{ ids: string[]; recipients: string[] }> {
  const from = cleanMailAgent(mail.from, "from");
  const content = checkContent(bus, mail);
  // Who is alive is decided before the write lock is taken (it may look at processes).
  const recipients = registeredPeers(bus).filter((name) => name !== from);
  return await write(bus, () => {
    const now = bus.now();
    const ids: string[] = [];
    for (const to of recipients) {
      ensureRoom(bus, to);
      const id = crypto.randomUUID();
      insertMail(bus.store, {
        id,
        from_agent: from,
        to_agent: to,
        content,
        created: now,
        source: mail.source,
        format: mail.format,
      });
      ids.push(id);
    }
    return { ids, recipients };
  });
}

/**
 * Pop the oldest unread message of `agent` (null when the mailbox is empty).
 * An empty mailbox is answered from a read, without taking the write lock,
 * so agents that poll cost the others nothing.
 */
export async function popOne(bus: Bus, agent: string): Promise<Mail | null> {
  const name = cleanMailAgent(agent, "agent");
  if (!bus.store.read(() => hasUnread(bus.store, name))) return null;
  const { rows: [row] } = await write(
    bus,
    () => popMail(bus.store, name, { limit: 1, now: bus.now() }),
  );
  return row ? toMail(row) : null;
}

/**
 * Pop the unread messages of `agent`, oldest first: at most 1000, and no
 * more than fit one tool result (the first always does); `hasMore` says
 * whether any are left.
 */
export async function drainMail(
  bus: Bus,
  agent: string,
): Promise<{ messages: Mail[]; hasMore: boolean }> {
  const name = cleanMailAgent(agent, "agent");
  const budget = bus.config.toolResultMaxBytes;
  // Mail bodies are counted in bytes by SQLite (they are sent as they are stored).
  const fits = (sizes: number[]) => {
    let used = 0;
    let count = 0;
    for (const size of sizes) {
      used += ITEM_OVERHEAD_BYTES + size;
      if (count > 0 && used > budget) break;
      count++;
    }
    return count;
  };
  return await write(bus, () => {
    const { rows, more } = popMail(bus.store, name, { limit: MAX_DRAIN, now: bus.now(), fits });
    return { messages: rows.map(toMail), hasMore: more };
  });
}

/** The oldest unread messages of `agent`, left unread. */
export function peekMailbox(
  bus: Bus,
  agent: string,
  limit: number,
): { messages: Mail[]; unread: number } {
  return bus.store.read(() => ({
    messages: peekMail(bus.store, { agent, limit }).map(toMail),
    unread: unreadCount(bus.store, agent),
  }));
}

/** How many unread messages wait for `agent`. */
export function unreadMail(bus: Bus, agent: string): number {
  return bus.store.read(() => unreadCount(bus.store, agent));
}

/** This peer's name and the other peers registered now. */
export function peersOf(bus: Bus, self: string): { self: string; peers: string[] } {
  return { self, peers: registeredPeers(bus).filter((n) => n !== self) };
}

/**
 * True when `name` was ever used by a peer (registered by a peer-bus server,
 * or the sender of some mail): mail to any other name probably has a typo
 * in it, and waits until somebody takes that name.
 */
export function nameKnown(bus: Bus, name: string): boolean {
  return bus.store.read(() => nameUsed(bus.store, name));
}

/** Unread and total mail per agent, busiest first. */
export function mailboxes(bus: Bus): { agent: string; unread: number; total: number }[] {
  return bus.store.read(() => mailboxTotals(bus.store));
}

/**
 * The peer-bus servers registered now, sorted. A registration whose process
 * is known to be gone (same host, no such process) is left out at once,
 * without waiting for its lease to lapse.
 */
export function registeredPeers(bus: Bus): string[] {
  return bus.store.read(() => livePeers(bus.store, bus.now()))
    .filter((peer) => holderAlive(peer.holder))
    .map((peer) => peer.name);
}

/** The body of a message as a peer-bus client sees it: JSON as is, text as a JSON string. */
export function bodyOf(mail: Mail): unknown {
  return mail.format === "json" ? JSON.parse(mail.content) : mail.content;
}

/** The JSON text of {@linkcode bodyOf}, stored bytes unchanged for JSON bodies. */
export function bodyJson(mail: Mail): string {
  return mail.format === "json" ? mail.content : JSON.stringify(mail.content);
}

/**
 * A running peer's entry in the registry: registered at start, refreshed a
 * third of the way into each lease (so an idle peer writes once every
 * `leaseSeconds / 3`), removed at a clean stop, and left to lapse if the
 * process dies.
 */
export class PeerRegistration {
  readonly name: string;
  readonly #bus: Bus;
  readonly #leaseSeconds: number;
  readonly #holder = `${HOST ?? "?"}/${Deno.pid}/${crypto.randomUUID().slice(0, 8)}`;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(bus: Bus, name: string, leaseSeconds: number) {
    this.#bus = bus;
    this.name = cleanMailAgent(name, "agent");
    this.#leaseSeconds = leaseSeconds;
  }

  /** Register now and keep the registration fresh. */
  async start(): Promise<void> {
    await this.#refresh();
    this.#timer = setInterval(() => {
      this.#refresh().catch((error) =>
        this.#bus.log.warn("Could not refresh the peer registration", { error: String(error) })
      );
    }, this.#leaseSeconds * 1000 / 3);
    Deno.unrefTimer(this.#timer);
  }

  /** Leave the registry. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    try {
      await write(
        this.#bus,
        () => unregisterPeer(this.#bus.store, { name: this.name, holder: this.#holder }),
      );
    } catch {
      // The database is gone: the registration lapses by itself.
    }
  }

  async #refresh(): Promise<void> {
    const now = this.#bus.now();
    await write(this.#bus, () =>
      registerPeer(this.#bus.store, {
        name: this.name,
        holder: this.#holder,
        now,
        expiresAt: now + this.#leaseSeconds,
      }));
  }
}

/**
 * This machine's name in peer holders, when we may read it (asked without
 * prompting); otherwise holders cannot be checked and leases decide.
 */
const HOST = granted({ name: "sys", kind: "hostname" }) ? Deno.hostname() : undefined;
/** Whether a process can be looked up in Linux's `/proc`. */
const PROC = Deno.build.os === "linux" && granted({ name: "read", path: "/proc" });

function granted(descriptor: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(descriptor).state === "granted";
}

/**
 * False only when `holder` (`host/pid/nonce`) names a process of this host
 * that no longer exists, as Linux's `/proc` tells when we may read it;
 * anything else (other hosts, older holders, no permission) counts as
 * alive, and its lease decides.
 */
function holderAlive(holder: string): boolean {
  if (HOST === undefined || !PROC) return true;
  const [host, pid] = holder.split("/", 2);
  if (host !== HOST || pid === undefined || !/^\d{1,10}$/.test(pid)) return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
}

/** A mail's content as it may be stored: within the size limit, its secrets screened. */
function checkContent(bus: Bus, mail: { content: string; format: "text" | "json" }): string {
  // (Text comes as `msg` (send_to_agent), JSON as `body` (the peer bus).)
  const field = mail.format === "json" ? "body" : "msg";
  if (mail.content.length > bus.config.maxMessageChars) {
    throw invalidArgument(`${field} exceeds max length (${bus.config.maxMessageChars})`);
  }
  return screenSecrets(mail.content, { mode: bus.config.secrets, field });
}

function ensureRoom(bus: Bus, to: string): void {
  const unread = unreadCount(bus.store, to);
  if (unread >= bus.config.maxMailboxDepth) {
    throw new BusError(
      "MAILBOX_FULL",
      `The mailbox of "${to}" is full (${unread} unread messages); nothing was sent. Try again once ${to} has read some`,
      { context: { to, unread, max: bus.config.maxMailboxDepth } },
    );
  }
}

function toMail(row: MailRow): Mail {
  return {
    id: row.id,
    from: row.from_agent,
    to: row.to_agent,
    content: row.content,
    format: row.format,
    source: row.source,
    created: row.created,
  };
}
