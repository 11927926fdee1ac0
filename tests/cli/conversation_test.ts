/**
 * A person in the conversation: `post`, `watch`, `export` and `search` as
 * real subprocesses, with agents on the other side through the MCP server.
 */

import assert from "node:assert/strict";
import { cli } from "../_helpers/cli.ts";
import { MAIN, type Peer, startPeer, until } from "../_helpers/peer.ts";
import { storeLocation } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

async function agentIn(dbPath: string, name: string): Promise<{ peer: Peer; topicId: string }> {
  const peer = await startPeer({ dbPath });
  const topicId = (await peer.ok("topic_create", { name: "room" })).topic_id as string;
  await peer.ok("topic_join", { agent_name: name, topic_id: topicId });
  return { peer, topicId };
}

Deno.test("post puts a person's message where agents sync it, from an argument or stdin", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const { peer, topicId } = await agentIn(dbPath, "agent");
  await using _ = peer;
  const env = { AGENT_BUS_DB: dbPath };
  const first = await cli(
    ["post", "room", "Please review PR 42", "--type", "question", "--json"],
    env,
  );
  assert.equal(first.code, 0, first.stderr);
  const posted = JSON.parse(first.stdout) as {
    message: { message_id: string; seq: number };
    duplicate: boolean;
  };
  assert.equal(posted.duplicate, false);
  const piped = await cli(
    ["post", topicId, "-", "--as", "lead", "--reply-to", posted.message.message_id],
    env,
    {
      stdin: "line one\nline two\n",
    },
  );
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(piped.stdout, /Posted #2 to "room" as lead/);
  const got = await peer.ok("sync", { topic_id: topicId, wait_seconds: 0 }) as {
    received: {
      sender: string;
      message_type: string;
      content_markdown: string;
      reply_to: string | null;
    }[];
  };
  assert.deepEqual(
    got.received.map((m) => [m.sender, m.message_type, m.content_markdown, m.reply_to]),
    [
      ["operator", "question", "Please review PR 42", null],
      ["lead", "message", "line one\nline two\n", posted.message.message_id],
    ],
  );

  const once = await cli(["post", "room", "idempotent", "--id", "op-1"], env);
  const twice = await cli(["post", "room", "idempotent", "--id", "op-1"], env);
  assert.match(once.stdout, /^Posted #3/);
  assert.match(twice.stdout, /^Already posted #3/);
  const badReply = await cli(["post", "room", "x", "--reply-to", "nope"], env);
  assert.equal(badReply.code, 2);
  assert.match(badReply.stderr, /INVALID_ARGUMENT/);
  await peer.ok("topic_close", { topic_id: topicId });
  const closed = await cli(["post", "room", "too late"], env);
  assert.equal(closed.code, 1);
  assert.match(closed.stderr, /TOPIC_CLOSED/);
  assert.equal((await cli(["post", "room"], env)).code, 2);
});

Deno.test("watch prints messages from other processes in order as they arrive, and Ctrl-C ends it cleanly", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const { peer, topicId } = await agentIn(dbPath, "writer");
  await using _ = peer;
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "before the watch" }],
    wait_seconds: 0,
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", MAIN, "watch", "room", "--last", "1"],
    env: { AGENT_BUS_DB: storeLocation(dbPath), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "";
  let stderr = "";
  const decoder = new TextDecoder();
  const reading = Promise.all([
    (async () => {
      for await (const chunk of child.stdout) stdout += decoder.decode(chunk, { stream: true });
    })(),
    (async () => {
      for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
    })(),
  ]);
  await until(() => stderr.includes("Watching"), { timeoutMs: 20_000, what: "watch to start" });
  for (const text of ["first live", "second live\nwith a second line", "third live"]) {
    await peer.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: text }],
      wait_seconds: 0,
    });
  }
  await until(() => stdout.includes("third live"), {
    timeoutMs: 10_000,
    what: "the third message",
  });
  child.kill("SIGINT");
  const status = await child.status;
  await reading;
  assert.equal(status.code, 0, stderr);
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 4, stdout);
  assert.match(lines[0]!, /^#1 \d\d:\d\d:\d\d writer: before the watch$/);
  assert.match(lines[1]!, /^#2 .* writer: first live$/);
  assert.match(lines[2]!, /^#3 .* writer: second live …$/);
  assert.match(lines[3]!, /^#4 .* writer: third live$/);
});

Deno.test("watch --json streams one object per message and stops when the topic closes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const { peer, topicId } = await agentIn(dbPath, "writer");
  await using _ = peer;
  const watching = cli(["watch", "room", "--from", "1", "--json", "--full"], {
    AGENT_BUS_DB: dbPath,
  });
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "a" }, { content_markdown: "b" }],
    wait_seconds: 0,
  });
  await peer.ok("topic_close", { topic_id: topicId });
  const result = await watching;
  assert.equal(result.code, 0, result.stderr);
  const messages = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(messages.map((m) => [m.seq, m.content_markdown]), [[1, "a"], [2, "b"]]);
});

Deno.test("export writes Markdown or JSON, whole or after a seq, to stdout or a file", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const { peer, topicId } = await agentIn(dbPath, "alice");
  await using _ = peer;
  const sent = await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "Question?", message_type: "question" }],
    wait_seconds: 0,
  }) as { sent: { message: { message_id: string } }[] };
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{
      content_markdown: "Answer.",
      message_type: "answer",
      reply_to: sent.sent[0]!.message.message_id,
    }],
    wait_seconds: 0,
  });
  const env = { AGENT_BUS_DB: dbPath };
  const markdown = await cli(["export", "room"], env);
  assert.equal(markdown.code, 0, markdown.stderr);
  assert.match(
    markdown.stdout,
    new RegExp(`^# room\\n\\n\\*\\*Topic ID:\\*\\* ${topicId}  \\n\\*\\*Messages:\\*\\* 2\\n`),
  );
  assert.match(
    markdown.stdout,
    /### \[1\] alice\n\n\*question · \d{4}-\d\d-\d\dT[\d:]+Z\*\n\nQuestion\?/,
  );
  assert.match(
    markdown.stdout,
    /### \[2\] alice\n\n\*answer · .*\*\n\n↩︎ reply to alice \(#1\)\n\nAnswer\./,
  );

  const file = `${tmp.path}/out/room.json`;
  await Deno.mkdir(`${tmp.path}/out`);
  const written = await cli(
    ["export", "room", "--format", "json", "-o", file, "--after-seq", "1"],
    env,
  );
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stderr, /Exported 1 message to /);
  const json = JSON.parse(await Deno.readTextFile(file));
  assert.equal(json.topic_id, topicId);
  assert.equal(json.topic_name, "room");
  assert.equal(json.message_count, 1);
  assert.deepEqual(Object.keys(json.messages[0]).sort(), [
    "content_markdown",
    "created_at",
    "message_id",
    "message_type",
    "metadata",
    "reply_to",
    "sender",
    "seq",
  ]);
  const nothing = await cli(["export", "room", "--after-seq", "2"], env);
  assert.equal(nothing.code, 0);
  assert.equal(nothing.stdout, "");
  assert.match(nothing.stderr, /No messages to export/);
  assert.equal((await cli(["export", "room", "--format", "pdf"], env)).code, 2);
});

Deno.test("search finds messages with the same engine as the tool", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const { peer, topicId } = await agentIn(dbPath, "alice");
  await using _ = peer;
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [
      { content_markdown: "The loadConfig function reads lib/config.ts" },
      { content_markdown: "unrelated chatter" },
    ],
    wait_seconds: 0,
  });
  const env = { AGENT_BUS_DB: dbPath, AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" };
  const text = await cli(["search", "config", "--mode", "fts"], env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^room #1 alice .* · rank -?\d+\.\d\d · /);
  assert.match(text.stdout, /«config»/);
  const fallback = await cli(["search", "loadConfig"], env);
  assert.match(fallback.stderr, /Semantic search is unavailable/);
  assert.match(
    fallback.stdout,
    /^room #1 alice .* · rank -?\d+\.\d\d · /,
    "hybrid falls back to ranks",
  );
  assert.doesNotMatch(text.stdout, /chatter/);
  const json = JSON.parse(
    (await cli(["search", "load", "config", "--json", "--topic", "room"], env)).stdout,
  );
  assert.equal(json.mode, "hybrid");
  assert.equal(json.results[0].seq, 1);
  assert.equal(json.warnings[0].code, "semantic_unavailable");
  assert.match((await cli(["search", "zebra"], env)).stdout, /No matches/);
  assert.equal((await cli(["search"], env)).code, 2);
});
