/**
 * A labelled search set for the quality benchmark: 64 situations agents
 * talk about, each with the message(s) that answer it and one query that
 * asks for it. About half the queries share words with their target; the
 * other half ask in other words (the case semantic search is for). The
 * benchmark mixes these messages into ~2,000 messages of ordinary chatter.
 *
 * Relevance: the first message of a case is the target (grade 2), the
 * others are related (grade 1).
 *
 * @module
 */

/** One labelled case. */
export interface QualityCase {
  query: string;
  messages: string[];
}

/** The cases. */
export const QUALITY_CASES: QualityCase[] = [
  {
    query: "database migration rollback",
    messages: [
      "Rolled back migration 0042_add_cursor_index: it locked the messages table for 40 s in staging.",
      "After the rollback the staging deploy went green again.",
    ],
  },
  {
    query: "undo the schema change that broke staging",
    messages: [
      "Reverting the 0042 migration fixed the staging outage; we will re-run it with CREATE INDEX CONCURRENTLY.",
    ],
  },
  {
    query: "flaky test timeout in CI",
    messages: [
      "The CI job `test:integration` times out about one run in ten; the culprit is waitForServer polling every 5 s.",
      "Lowering the poll interval to 50 ms made the integration job stable.",
    ],
  },
  {
    query: "why does the pipeline sometimes hang",
    messages: [
      "Our GitHub Actions workflow stalls when the cache restore step never finishes; adding `timeout-minutes: 5` to it unblocks the queue.",
    ],
  },
  {
    query: "TypeError cannot read properties of undefined reading map",
    messages: [
      "TypeError: Cannot read properties of undefined (reading 'map')\n    at renderTopicList (src/ui/topic_list.tsx:42:18)\n    at renderWithHooks (react-dom.development.js:14985:18)",
      "The topic list crashes when the API returns no `topics` field; default it to [].",
    ],
  },
  {
    query: "frontend blows up when the server sends an empty response",
    messages: [
      "If /api/topics answers 204 the React list component throws; we now treat an empty body as an empty list.",
    ],
  },
  {
    query: "memory leak in the worker",
    messages: [
      "The embedding worker's RSS grows 30 MB per hour: we keep every Float32Array in a Map keyed by message id and never evict.",
    ],
  },
  {
    query: "process keeps using more RAM over time",
    messages: [
      "Heap snapshots show the request log buffer is never trimmed; capping it at 1,000 entries stopped the growth.",
    ],
  },
  {
    query: "getUserName returns null",
    messages: [
      "`getUserName()` returns null for users created before the SSO migration because `profile.displayName` is missing.",
    ],
  },
  {
    query: "some accounts show no display name",
    messages: [
      "Legacy accounts have an empty display name; fall back to the e-mail prefix in the header.",
    ],
  },
  {
    query: "where is the retry policy configured",
    messages: [
      "The retry policy lives in src/net/retry_policy.ts: three attempts with exponential back-off from 200 ms.",
    ],
  },
  {
    query: "how many times do we try again after a network failure",
    messages: ["We give up after the third attempt; the waits are 200 ms, 400 ms and 800 ms."],
  },
  {
    query: "sqlite database is locked error",
    messages: [
      "`SQLITE_BUSY: database is locked` shows up when two processes start a write at once; BEGIN IMMEDIATE with a busy timeout fixes it.",
    ],
  },
  {
    query: "two processes writing at the same time fail",
    messages: [
      "Concurrent writers collided on the shared file; making every write transaction take the lock up front solved the failures.",
    ],
  },
  {
    query: "rate limit 429 from the API",
    messages: [
      "The upstream API answers 429 Too Many Requests above 60 calls per minute; we now queue calls client-side.",
    ],
  },
  {
    query: "the provider throttles us",
    messages: [
      "Their gateway rejects bursts: more than one request per second gets refused, so batch the lookups.",
    ],
  },
  {
    query: "deploy to production checklist",
    messages: [
      "Production deploy checklist: tag the release, run smoke tests, watch error rates for 15 minutes, then announce.",
    ],
  },
  {
    query: "steps before shipping a release",
    messages: [
      "Before we ship: bump the version, update the changelog, build the binaries, and sign them.",
    ],
  },
  {
    query: "docker image too big",
    messages: [
      "The Docker image is 1.9 GB because the build stage copies node_modules; a multi-stage build gets it to 180 MB.",
    ],
  },
  {
    query: "container size reduction",
    messages: ["Switching the base image to distroless cut the container from 900 MB to 120 MB."],
  },
  {
    query: "segfault in native module",
    messages: [
      "Segmentation fault (core dumped) in better-sqlite3 after upgrading Node; rebuilding the native addon fixed it.",
    ],
  },
  {
    query: "the app crashes hard after upgrading node",
    messages: [
      "Node 22 broke our prebuilt binary: the process dies with signal 11 until the addon is recompiled.",
    ],
  },
  {
    query: "password reset email not sent",
    messages: [
      "Password reset e-mails are stuck: the SMTP credentials expired on Monday and the mailer swallows the error.",
    ],
  },
  {
    query: "users can't recover their accounts",
    messages: [
      "Nobody receives the recovery link because the mail provider rejects our expired API key.",
    ],
  },
  {
    query: "cors error when calling the api from the browser",
    messages: [
      "The browser blocks requests to api.internal because the server sends no Access-Control-Allow-Origin header.",
    ],
  },
  {
    query: "browser refuses cross-origin request",
    messages: [
      "Chrome reports the preflight failed: OPTIONS returns 405, so add an OPTIONS handler to the router.",
    ],
  },
  {
    query: "off by one in pagination",
    messages: [
      "Pagination skips one item per page: `offset = page * size + 1` should be `page * size`.",
    ],
  },
  {
    query: "each page misses an entry",
    messages: [
      "The list jumps from item 20 to item 22 between pages; the page offset adds an extra one.",
    ],
  },
  {
    query: "slow query on messages table",
    messages: [
      "SELECT ... FROM messages WHERE topic_id = ? ORDER BY seq takes 800 ms without an index on (topic_id, seq).",
    ],
  },
  {
    query: "loading a conversation is sluggish",
    messages: [
      "Opening a long thread takes almost a second because the history is read with a full table scan.",
    ],
  },
  {
    query: "jwt token expired",
    messages: [
      "JWT access tokens expire after 15 minutes and the client never refreshes them, so calls fail with 401.",
    ],
  },
  {
    query: "users get logged out randomly",
    messages: [
      "People are signed out mid-session because the refresh token cookie is scoped to the wrong path.",
    ],
  },
  {
    query: "config file location",
    messages: [
      "The config file is read from ~/.config/agent-bus/config.toml, falling back to /etc/agent-bus/config.toml.",
    ],
  },
  {
    query: "where are settings stored on disk",
    messages: [
      "Settings live in the user's XDG config directory; delete that folder to reset everything.",
    ],
  },
  {
    query: "websocket disconnects every minute",
    messages: [
      "The WebSocket drops every 60 s because the load balancer idle timeout is 60 s and we send no pings.",
    ],
  },
  {
    query: "live connection keeps dropping",
    messages: [
      "Our realtime channel closes after a minute of silence; a keep-alive ping every 25 s keeps it open.",
    ],
  },
  {
    query: "disk full on the build machine",
    messages: [
      "The build agent ran out of disk: /var/lib/docker holds 180 GB of dangling images; prune them weekly.",
    ],
  },
  {
    query: "no space left on device",
    messages: [
      "ENOSPC: no space left on device, write '/tmp/cache/artifact.tar' during the packaging step.",
    ],
  },
  {
    query: "unicode emoji breaks the parser",
    messages: [
      "The tokenizer splits emoji surrogate pairs and produces invalid UTF-8; iterate by code point instead.",
    ],
  },
  {
    query: "special characters get mangled",
    messages: [
      "Names with accents come back as garbage because the CSV export writes Latin-1 instead of UTF-8.",
    ],
  },
  {
    query: "race condition in cache invalidation",
    messages: [
      "Two requests refill the cache at once and the older value wins; use a version check when writing.",
    ],
  },
  {
    query: "stale data shown after an update",
    messages: [
      "Users see the old profile for a minute after saving because the CDN caches the API response.",
    ],
  },
  {
    query: "feature flag for the new editor",
    messages: [
      "The new editor is behind the `editor_v2` feature flag; enable it per workspace in the admin panel.",
    ],
  },
  {
    query: "how do I turn on the beta text editor",
    messages: [
      "To try the beta editor, switch on editor v2 for your workspace under Admin > Experiments.",
    ],
  },
  {
    query: "payment webhook signature invalid",
    messages: [
      "Stripe webhooks fail signature checks because we parse the body as JSON before verifying the raw bytes.",
    ],
  },
  {
    query: "billing callbacks rejected",
    messages: [
      "Invoice events from the payment provider are refused by our endpoint: the signing secret was rotated.",
    ],
  },
  {
    query: "timezone bug in reports",
    messages: [
      "Daily reports are off by one day for users in UTC+10 because we bucket by server-local midnight.",
    ],
  },
  {
    query: "dates shifted for australian users",
    messages: [
      "Customers in Sydney see yesterday's totals; group by the user's timezone, not the server's.",
    ],
  },
  {
    query: "kubernetes pod crashloopbackoff",
    messages: [
      "The api pod is in CrashLoopBackOff: the liveness probe hits /health before the server listens.",
    ],
  },
  {
    query: "service restarts over and over on the cluster",
    messages: [
      "Our deployment keeps restarting because the health check starts too early; add an initial delay of 10 s.",
    ],
  },
  {
    query: "git merge conflict in lockfile",
    messages: [
      "Merge conflicts in deno.lock: regenerate it with `deno cache --reload` instead of editing by hand.",
    ],
  },
  {
    query: "resolving conflicts in generated files",
    messages: ["Never hand-merge generated files; take either side and run the generator again."],
  },
  {
    query: "ssl certificate expired",
    messages: [
      "The TLS certificate for bus.example.com expired at midnight; certbot's renew timer was disabled.",
    ],
  },
  {
    query: "https stopped working on the site",
    messages: [
      "Browsers warn that the connection is not private since last night: the cert renewal job never ran.",
    ],
  },
  {
    query: "environment variable not picked up",
    messages: [
      "AGENT_BUS_DB is ignored when Codex starts the server because Codex does not pass the parent environment.",
    ],
  },
  {
    query: "server ignores my setting when launched by the editor",
    messages: [
      "When the IDE launches the tool, shell exports are invisible to it; put the variable in the client's env block.",
    ],
  },
  {
    query: "logging too verbose",
    messages: [
      "Debug logging is on in production and writes 4 GB a day; set LOG_LEVEL=warn in the service unit.",
    ],
  },
  {
    query: "log files filling up",
    messages: ["The log directory grows without bound; enable logrotate with seven daily files."],
  },
  {
    query: "search returns irrelevant results",
    messages: [
      "Hybrid search ranked unrelated messages first because bm25 scores were ignored for embedded candidates.",
    ],
  },
  {
    query: "results from the finder make no sense",
    messages: [
      "Queries return noise when nothing matches; a minimum similarity score would return nothing instead.",
    ],
  },
  {
    query: "upgrade to v3.53.2",
    messages: ["Bumped the bundled SQLite to v3.53.2 for the FTS5 contentless_unindexed option."],
  },
  {
    query: "which sqlite version do we ship",
    messages: [
      "We ship SQLite 3.53 inside the runtime, so FTS5 and JSON functions are always available.",
    ],
  },
  {
    query: "src/bus/sync.ts cursor",
    messages: [
      "In src/bus/sync.ts the cursor only advances over messages that were actually returned.",
    ],
  },
  {
    query: "read position moves past unseen messages",
    messages: [
      "Agents lost messages because the read marker jumped past items the client never displayed.",
    ],
  },
];
