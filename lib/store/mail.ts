/**
 * SQL for direct mail (`bus_mailbox`) and the registry of running peers
 * (`bus_peers`).
 *
 * A pop is one `UPDATE … RETURNING` inside the caller's `BEGIN IMMEDIATE`:
 * the oldest unread row is marked done and returned in the same statement,
 * so two processes can never pop the same message, and a message is never
 * marked done without being returned.
 *
 * @module
 */

import type { Store } from "./types.ts";

/** A row of `bus_mailbox`. */
export interface MailRow {
  id: string;
  from_agent: string;
  to_agent: string;
  content: string;
  created: number;
  done: number;
  processed: number | null;
  /** Where it was sent from: `http`, `peer-bus` or `cli`. */
  source: string;
  /** `text` (a string) or `json` (a JSON document, kept verbatim). */
  format: "text" | "json";
}

/** Store a message (the caller checked that the id is free). */
export function insertMail(store: Store, row: Omit<MailRow, "done" | "processed">): void {
  store.stmt(
    `INSERT INTO bus_mailbox (id, from_agent, to_agent, content, created, done, processed, source, format)
     VALUES (?, ?, ?, ?, ?, 0, NULL, ?, ?)`,
  ).run(row.id, row.from_agent, row.to_agent, row.content, row.created, row.source, row.format);
}

/** The message with this id. */
export function getMail(store: Store, id: string): MailRow | undefined {
  return store.stmt("SELECT * FROM bus_mailbox WHERE id = ?").get<MailRow>(id);
}

/** How many unread messages wait for `agent`. */
export function unreadCount(store: Store, agent: string): number {
  const sql = "SELECT COUNT(*) AS n FROM bus_mailbox WHERE to_agent = ? AND done = 0";
  return store.stmt(sql).get<{ n: number }>(agent)!.n;
}

/** Whether any unread message waits for `agent` (cheaper than counting). */
export function hasUnread(store: Store, agent: string): boolean {
  return store.stmt("SELECT 1 FROM bus_mailbox WHERE to_agent = ? AND done = 0 LIMIT 1").get(
    agent,
  ) !==
    undefined;
}

/**
 * Mark the `limit` oldest unread messages of `agent` done and return them,
 * oldest first, and whether unread ones are left. Call inside a write
 * transaction, as its last statements. (Finding the rows first and updating
 * them by rowid is cheaper on SQLite than one `UPDATE ... IN (SELECT ...
 * ORDER BY ... LIMIT)`; on PostgreSQL the read goes with `BEGIN` and the
 * update with `COMMIT`: two round trips, whatever the count.)
 * `fits`, given the UTF-8 sizes of the oldest contents, says how many of them to take.
 */
export function popMail(
  store: Store,
  agent: string,
  options: { limit: number; now: number; fits?: (bytes: number[]) => number },
): { rows: MailRow[]; more: boolean } {
  // One more than the limit: whether any are left comes with the same read.
  const oldest = store.stmt(
    `SELECT rowid AS position, length(CAST(content AS BLOB)) AS bytes FROM bus_mailbox
     WHERE to_agent = ? AND done = 0 ORDER BY created, rowid LIMIT ?`,
  ).all<{ position: number; bytes: number }>(agent, options.limit + 1);
  const candidates = oldest.slice(0, options.limit);
  const count = options.fits ? options.fits(candidates.map((row) => row.bytes)) : candidates.length;
  const taken = candidates.slice(0, count).map((row) => Number(row.position));
  if (taken.length === 0) return { rows: [], more: oldest.length > 0 };
  // All marked in one statement, sent with COMMIT on PostgreSQL; returned in mailbox order.
  const marked = store.finish([{
    sql: `UPDATE bus_mailbox SET done = 1, processed = ?
          WHERE rowid IN (SELECT CAST(value AS BIGINT) FROM json_each(?))
          RETURNING rowid AS position, *`,
    params: [options.now, JSON.stringify(taken)],
  }])[0] as unknown as (MailRow & { position: number })[];
  const order = new Map(taken.map((position, i) => [position, i]));
  marked.sort((a, b) => order.get(Number(a.position))! - order.get(Number(b.position))!);
  return {
    rows: marked.map(({ position: _, ...row }) => row as MailRow),
    more: oldest.length > count,
  };
}

/** The oldest unread messages of `agent`, without marking them. */
export function peekMail(
  store: Store,
  { agent, limit }: { agent: string; limit: number },
): MailRow[] {
  return store.stmt(
    `SELECT * FROM bus_mailbox WHERE to_agent = ? AND done = 0 ORDER BY created, rowid LIMIT ?`,
  ).all<MailRow>(agent, limit);
}

/** Register (or refresh) a running peer under `name` until `expiresAt`. */
export function registerPeer(
  store: Store,
  peer: { name: string; holder: string; now: number; expiresAt: number },
): void {
  store.stmt(
    `INSERT INTO bus_peers (name, holder, started_at, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
       started_at = CASE WHEN bus_peers.holder = excluded.holder THEN bus_peers.started_at
                         ELSE excluded.started_at END`,
  ).run(peer.name, peer.holder, peer.now, peer.expiresAt);
}

/**
 * End a peer's registration, if `holder` still owns it. The row stays,
 * expired, so the name remains known (see {@linkcode nameUsed}).
 */
export function unregisterPeer(
  store: Store,
  { name, holder }: { name: string; holder: string },
): void {
  store.stmt("UPDATE bus_peers SET expires_at = 0 WHERE name = ? AND holder = ?").run(name, holder);
}

/** The peers registered and not expired at `now`, by name, with who holds each. */
export function livePeers(store: Store, now: number): { name: string; holder: string }[] {
  return store.stmt("SELECT name, holder FROM bus_peers WHERE expires_at >= ? ORDER BY name")
    .all<{ name: string; holder: string }>(now);
}

/** True when a peer-bus server ever registered `name`, or mail was ever sent from it. */
export function nameUsed(store: Store, name: string): boolean {
  return store.stmt(
    `SELECT EXISTS (SELECT 1 FROM bus_peers WHERE name = ?1)
         OR EXISTS (SELECT 1 FROM bus_mailbox WHERE from_agent = ?1) AS used`,
  ).get(name)!.used === 1;
}

/** Unread and total mail per recipient, busiest first. */
export function mailboxTotals(store: Store): { agent: string; unread: number; total: number }[] {
  return store.stmt(
    `SELECT to_agent AS agent, SUM(CASE WHEN done = 0 THEN 1 ELSE 0 END) AS unread, COUNT(*) AS total FROM bus_mailbox
     GROUP BY to_agent ORDER BY unread DESC, agent`,
  ).all<{ agent: string; unread: number; total: number }>();
}
