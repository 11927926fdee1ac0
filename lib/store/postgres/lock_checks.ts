/**
 * A check, for test clusters, that every write scoped to topics touches only
 * what its locks guard (`locks.ts`): each row of a table keyed by topic
 * under that topic's lock, anything else under the commit lock.
 *
 * Which lock a statement needs is declared where it is written
 * (`TOPIC_ROWS`); nothing else reads it from the statement's text, so a
 * wrong declaration (or a statement that writes rows of a topic its write
 * did not name) would race silently with writers of other topics. These
 * triggers turn it into an error at the row it touches: installed in a
 * cluster's `template1` ({@linkcode lockCheckStatements}), every database
 * created afterwards attaches them to each table the bus creates, and a
 * scoped write (one holding the bus lock shared) that writes without the
 * right lock fails. Writes holding the bus lock exclusively, and programs
 * other than the bus (holding none), are not checked. Never installed by
 * the bus itself: each checked row costs a look at `pg_locks`.
 *
 * @module
 */

import { COMMIT_LOCK, TOPIC_LOCK_CLASS, WRITE_LOCK } from "./locks.ts";

/**
 * The tables whose rows are each keyed by one topic (`topic_id`), which a
 * scoped write may change under its topic locks alone.
 */
const TOPIC_TABLES = [
  "topic_seq",
  "bus_fts",
  "cursors",
  "bus_waiters",
  "bus_reply_tokens",
  "bus_refresh_requests",
  "bus_chat_waits",
  "bus_typing",
  "bus_turns",
];

/** The error a failed check raises starts with this. */
export const LOCK_CHECK_FAILED = "bus lock check";

/**
 * The statements that install the check in a database (run them in
 * `template1` before creating the databases to check; they need a
 * superuser, for the event trigger).
 */
export function lockCheckStatements(): string[] {
  // The topic lock's key as pg_locks shows it: topicLockKey() as an unsigned oid.
  const topicKey = `CREATE OR REPLACE FUNCTION bus_check_topic_key(id text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE hash bigint := 2166136261;
    BEGIN
      FOR i IN 1..length(id) LOOP
        hash := ((hash # ascii(substr(id, i, 1))) * 16777619) % 4294967296;
      END LOOP;
      RETURN hash;
    END $$`;
  const held = (classid: number, objid: string, subid: number, mode: string) =>
    `EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
      AND granted AND classid = ${classid} AND objid::bigint = ${objid} AND objsubid = ${subid}
      AND mode = '${mode}')`;
  const check = `CREATE OR REPLACE FUNCTION bus_check_locks() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE topic text;
    BEGIN
      IF NOT ${held(0, String(WRITE_LOCK), 1, "ShareLock")} THEN RETURN NULL; END IF;
      IF TG_ARGV[0] = 'topic' THEN
        topic := CASE TG_OP WHEN 'DELETE' THEN OLD.topic_id ELSE NEW.topic_id END;
        IF ${held(TOPIC_LOCK_CLASS, "bus_check_topic_key(topic)", 2, "ExclusiveLock")} THEN
          RETURN NULL;
        END IF;
        RAISE EXCEPTION '${LOCK_CHECK_FAILED}: % of a row of topic % in %, whose lock this write does not hold',
          TG_OP, topic, TG_TABLE_NAME;
      END IF;
      IF ${held(0, String(COMMIT_LOCK), 1, "ExclusiveLock")} THEN RETURN NULL; END IF;
      RAISE EXCEPTION '${LOCK_CHECK_FAILED}: % on % in a write scoped to topics, without the commit lock',
        TG_OP, TG_TABLE_NAME;
    END $$`;
  const topicTables = TOPIC_TABLES.map((table) => `'${table}'`).join(", ");
  const attach = `CREATE OR REPLACE FUNCTION bus_check_attach() RETURNS event_trigger
    LANGUAGE plpgsql AS $$
    DECLARE created record; name text;
    BEGIN
      FOR created IN SELECT * FROM pg_event_trigger_ddl_commands()
        WHERE command_tag = 'CREATE TABLE' AND schema_name NOT LIKE 'pg_temp%'
      LOOP
        SELECT relname INTO name FROM pg_class WHERE oid = created.objid;
        IF name IN (${topicTables}) THEN
          EXECUTE format('CREATE TRIGGER bus_check_locks AFTER INSERT OR UPDATE OR DELETE ON %s
            FOR EACH ROW EXECUTE FUNCTION bus_check_locks(%L)', created.object_identity, 'topic');
        ELSE
          EXECUTE format('CREATE TRIGGER bus_check_locks AFTER INSERT OR UPDATE OR DELETE ON %s
            FOR EACH STATEMENT EXECUTE FUNCTION bus_check_locks(%L)', created.object_identity, 'bus');
        END IF;
      END LOOP;
    END $$`;
  return [
    topicKey,
    check,
    attach,
    "DROP EVENT TRIGGER IF EXISTS bus_check_attach",
    "CREATE EVENT TRIGGER bus_check_attach ON ddl_command_end WHEN TAG IN ('CREATE TABLE') " +
    "EXECUTE FUNCTION bus_check_attach()",
  ];
}
