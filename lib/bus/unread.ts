/**
 * What is waiting for one agent session, as its hooks report it: new
 * messages on the topics it joined (after its cursor, not its own), mail
 * for its peer-bus name, settled answers to the questions it asked, and, for
 * a teacher, questions waiting for an answer. Each item carries a few first
 * lines and a marker (what a hook remembers having reported).
 *
 * Which recorded session is "this agent" is decided here too
 * ({@linkcode matchSessions}): the record whose client process is the
 * nearest ancestor of the hook's process, else the records made in the
 * hook's working directory.
 *
 * One read transaction; every count is bounded.
 *
 * @module
 */

import { getCursor } from "../store/cursors.ts";
import { peekMail, unreadCount } from "../store/mail.ts";
import { countMessagesAfter, latestSeq, messagesAfter } from "../store/messages.ts";
import { pendingQuestionsAnywhere } from "../store/questions.ts";
import {
  deleteSession,
  getHookState,
  putHookState,
  type SessionRow,
  sessionsOnHost,
  sessionTopics,
  settledSessionQuestions,
} from "../store/sessions.ts";
import { getTopic } from "../store/topics.ts";
import { type Bus, write } from "./mod.ts";

/** Unread messages counted per topic, at most. */
export const MAX_COUNTED = 999;
/** Messages (or mails, or questions) quoted per item. */
export const QUOTED = 3;
/** Characters of a message quoted. */
const EXCERPT_CHARS = 160;

/** A quoted message: who wrote it and its first lines. */
export interface Excerpt {
  from: string;
  text: string;
}

/** One thing waiting for the agent. */
export type UnreadItem =
  | {
    kind: "topic";
    topicId: string;
    topicName: string;
    agentName: string;
    /** Unread messages, at most {@linkcode MAX_COUNTED} counted. */
    count: number;
    first: Excerpt[];
    marker: string;
  }
  | { kind: "mail"; agent: string; count: number; first: Excerpt[]; marker: string }
  | {
    kind: "answer";
    topicId: string;
    questionId: string;
    status: string;
    by: string | null;
    marker: string;
  }
  | {
    kind: "queue";
    count: number;
    first: (Excerpt & { topicId: string; questionId: string })[];
    marker: string;
  };

/** The hook's own place, to match against the register. */
export interface HookPlace {
  host: string;
  /** The hook's ancestors, nearest first (its parent first); undefined when unknown. */
  ancestors: number[] | undefined;
  /** Pids alive now, with when each started (Unix seconds) where known; undefined when unknown. */
  alive: Map<number, number | undefined> | undefined;
  /** The working directories the client reported (its `cwd`, its project dir). */
  cwds: string[];
}

/**
 * A server this process knows runs: a session attached to a resident bus,
 * by its pid and since when (Unix seconds). A record with that pid made
 * since then is that session's; one made before is another process's that
 * had the pid.
 */
export interface Attachment {
  pid: number;
  since: number;
}

/** The sessions {@linkcode matchSessions} found, those of servers that are gone, and how. */
export interface SessionMatch {
  mine: SessionRow[];
  dead: SessionRow[];
  by: string;
}

/**
 * How far a server's recorded start may be before its process's start as
 * `ps` reports it (whole seconds) and still be that process.
 */
const START_SLACK_SECONDS = 2;

/**
 * Whether the server that made `row` still runs: its pid is alive and that
 * process started before the record was made (a pid reused later is another
 * process).
 */
export function serverRuns(row: SessionRow, alive: Map<number, number | undefined>): boolean {
  if (!alive.has(row.server_pid)) return false;
  const started = alive.get(row.server_pid);
  return started === undefined || started <= row.started_at + START_SLACK_SECONDS;
}

/**
 * The recorded sessions that are this hook's: those whose client is the
 * nearest of the hook's ancestors (a client with two agent-bus servers has
 * two), else those started in one of `place.cwds` (when one client has
 * records there, they are its own without asking the tree). Records of
 * servers that no longer run (gone, or their pid reused) are returned
 * apart, to be removed: a hook must never act on a record of a server that
 * is gone, so the process tree (one `ps` run, `readTree`) is read whenever
 * this host has a record of a server not known to run (`hook.attached`, a
 * resident bus's own sessions), or the hook's client is not its parent and
 * the working directory does not tell.
 */
export async function matchSessions(
  bus: Bus,
  hook: Omit<HookPlace, "ancestors" | "alive"> & { parent?: number; attached?: Attachment[] },
  readTree: () => Promise<Pick<HookPlace, "ancestors" | "alive"> | undefined>,
): Promise<SessionMatch> {
  const rows = bus.store.read(() => sessionsOnHost(bus.store, hook.host));
  if (rows.length === 0) return { mine: [], dead: [], by: "no sessions on this host" };
  let tree: Promise<Pick<HookPlace, "ancestors" | "alive"> | undefined> | undefined;
  const treeOnce = () => tree ??= readTree();
  const attached = hook.attached ?? [];
  const unknown = rows.filter((row) =>
    !attached.some((a) => a.pid === row.server_pid && row.started_at >= a.since)
  );
  const alive = unknown.length > 0 ? (await treeOnce())?.alive : undefined;
  const dead = alive ? unknown.filter((row) => !serverRuns(row, alive)) : [];
  const live = rows.filter((row) => !dead.includes(row));
  const here = live.filter((row) => row.cwd !== "" && hook.cwds.includes(row.cwd));
  if (here.length > 0 && here.every((row) => row.client_pid === here[0]!.client_pid)) {
    return { mine: here, dead, by: "working directory" };
  }
  // The nearest ancestor may be the parent itself, which needs no process tree.
  const parentOf = live.filter((row) => row.client_pid === hook.parent);
  if (parentOf.length > 0) return { mine: parentOf, dead, by: "client process" };
  const ancestors = (await treeOnce())?.ancestors;
  if (ancestors) {
    let nearest = Infinity;
    for (const row of live) {
      const depth = ancestors.indexOf(row.client_pid);
      if (depth >= 0 && depth < nearest) nearest = depth;
    }
    if (nearest !== Infinity) {
      const mine = live.filter((row) => row.client_pid === ancestors[nearest]);
      return { mine, dead, by: "client process" };
    }
  }
  const mine = live.filter((row) => row.cwd !== "" && hook.cwds.includes(row.cwd));
  return { mine, dead, by: "working directory, no client process among the hook's ancestors" };
}

/** Remove the records of servers that died without removing them. */
export async function forgetSessions(bus: Bus, rows: SessionRow[]): Promise<void> {
  if (rows.length === 0) return;
  await write(bus, () => {
    for (const row of rows) deleteSession(bus.store, row.session_id);
  });
}

/** The first lines of a body, on one line, cut to {@linkcode EXCERPT_CHARS}. */
export function excerpt(body: string): string {
  const lines = body.slice(0, EXCERPT_CHARS * 2).split("\n").map((line) => line.trim())
    .filter((line) => line !== "");
  const text = lines.slice(0, 2).join(" / ");
  return text.length > EXCERPT_CHARS || body.length > EXCERPT_CHARS * 2 || lines.length > 2
    ? `${text.slice(0, EXCERPT_CHARS)}…`
    : text;
}

/**
 * The sessions of the clients a hook matched, read again at each look (a
 * server its client starts, or restarts, while the hook waits is counted),
 * leaving out the records found to be gone.
 */
export interface SessionsOf {
  host: string;
  clients: Set<number>;
  gone: Set<string>;
}

/**
 * Everything waiting for the sessions `of` (given, or read in the same
 * snapshot), in one read: news in the topics each holds a name in, and what
 * `watchOf` says its profile watches besides.
 */
export function unreadFor(
  bus: Bus,
  of: SessionRow[] | SessionsOf,
  watchOf: (profile: string) => { mail: boolean; questionQueue: boolean },
): UnreadItem[] {
  const { store } = bus;
  return store.read(() => {
    const sessions = Array.isArray(of)
      ? of
      : sessionsOnHost(store, of.host).filter((row) =>
        of.clients.has(row.client_pid) && !of.gone.has(row.session_id)
      );
    const items: UnreadItem[] = [];
    const seenTopics = new Set<string>();
    for (const session of sessions) {
      for (const held of sessionTopics(store, session.session_id)) {
        const key = `${held.topic_id}\u0000${held.agent_name}`;
        if (seenTopics.has(key)) continue;
        seenTopics.add(key);
        const topic = getTopic(store, held.topic_id);
        if (!topic) continue;
        const after = getCursor(store, { topicId: topic.topic_id, agentName: held.agent_name })
          ?.last_seq ?? 0;
        const query = {
          topicId: topic.topic_id,
          afterSeq: after,
          excludeSender: held.agent_name,
          limit: MAX_COUNTED,
        };
        const count = countMessagesAfter(store, query);
        if (count === 0) continue;
        items.push({
          kind: "topic",
          topicId: topic.topic_id,
          topicName: topic.name,
          agentName: held.agent_name,
          count,
          first: messagesAfter(store, { ...query, limit: QUOTED }).map((m) => ({
            from: m.sender,
            text: excerpt(m.content_markdown),
          })),
          marker: `t:${topic.topic_id}:${held.agent_name}:${latestSeq(store, topic.topic_id)}`,
        });
      }
      const watch = watchOf(session.profile);
      if (watch.mail && session.agent) {
        const count = unreadCount(store, session.agent);
        if (count > 0) {
          const first = peekMail(store, { agent: session.agent, limit: QUOTED });
          items.push({
            kind: "mail",
            agent: session.agent,
            count,
            first: first.map((m) => ({ from: m.from_agent, text: excerpt(m.content) })),
            marker: `m:${session.agent}:${count}:${first[0]?.id ?? ""}`,
          });
        }
      }
      for (const q of settledSessionQuestions(store, session.session_id)) {
        items.push({
          kind: "answer",
          topicId: q.topic_id,
          questionId: q.question_id,
          status: q.status,
          by: q.answered_by,
          marker: `a:${q.question_id}`,
        });
      }
      if (watch.questionQueue && !items.some((item) => item.kind === "queue")) {
        items.push(...questionQueue(store));
      }
    }
    return items;
  });
}

/** The students' questions waiting anywhere on the bus, as an item (none when there are none). */
function questionQueue(store: Bus["store"]): UnreadItem[] {
  const pending = pendingQuestionsAnywhere(store, MAX_COUNTED);
  if (pending.length === 0) return [];
  return [{
    kind: "queue",
    count: pending.length,
    first: pending.slice(0, QUOTED).map((q) => ({
      from: q.asked_by,
      text: excerpt(q.question_text),
      topicId: q.topic_id,
      questionId: q.question_id,
    })),
    marker: `q:${pending.length}:${pending.at(-1)!.question_id}`,
  }];
}

/** What a client session's stop hook remembers between runs. */
export interface HookMemory {
  /** Stops blocked in a row. */
  blocks: number;
  /** Markers of the items last reported. */
  reported: string[];
}

/** How long a client session's hook memory is kept after its last use. */
const HOOK_MEMORY_SECONDS = 7 * 86_400;

/** The stop hook's memory for a client session (empty when it has none). */
export function hookMemory(bus: Bus, hookSession: string): HookMemory {
  const row = bus.store.read(() => getHookState(bus.store, hookSession));
  if (!row) return { blocks: 0, reported: [] };
  let reported: unknown;
  try {
    reported = JSON.parse(row.reported);
  } catch {
    reported = [];
  }
  return {
    blocks: row.blocks,
    reported: Array.isArray(reported) ? reported.filter((m) => typeof m === "string") : [],
  };
}

/** Save the stop hook's memory for a client session (and drop memories unused for a week). */
export async function rememberHook(
  bus: Bus,
  hookSession: string,
  memory: HookMemory,
): Promise<void> {
  const now = bus.now();
  await write(bus, () =>
    putHookState(bus.store, {
      hook_session: hookSession,
      blocks: memory.blocks,
      reported: JSON.stringify(memory.reported),
      updated_at: now,
    }, now - HOOK_MEMORY_SECONDS));
}
