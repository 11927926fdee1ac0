/**
 * The secret screen (`lib/bus/secrets.ts`): what it recognises and what it
 * lets pass, and that every path that stores text runs it — v6.3 `sync`,
 * the console's and the CLI's posts, the AgentChatBus dialect (MCP and
 * REST, posts, edits, system prompts), mail, the peer bus, teacher/student
 * — with each dialect's own error, in `block`, `redact` and `allow` modes.
 *
 * The credentials below are made up and assembled at run time, so that no
 * scanner takes this file for a leak.
 */

import assert from "node:assert/strict";
import { findSecrets, isPlaceholder, screenSecrets } from "../../lib/bus/secrets.ts";
import { cli } from "../_helpers/cli.ts";
import { connectInProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const RANDOM = "x7Kq9ZrT2mWp4LbN8vYc3HdJ6sFg1QeR5uAo"; // 36 characters, no run or sequence
const AWS_KEY = "AK" + "IAQ3EGUYFQ7MPLZ5TW";
const GITHUB = "gh" + "p_" + RANDOM;

/** One made-up credential of each kind, inside a sentence. */
const EXAMPLES: readonly [kind: string, text: string][] = [
  ["aws-access-key", `the key is ${AWS_KEY}, rotate it`],
  ["aws-secret-key", `aws_secret_access_key = ${"wJalrXUtnF9MI/K7MDENG/bPxRfiCYzQ8kLp2Vt1"}`],
  ["github-token", `export GITHUB_TOKEN=${GITHUB}`],
  ["github-token", "github_pat_" + RANDOM.slice(0, 22) + "_" + (RANDOM + RANDOM).slice(0, 59)],
  ["gitlab-token", "gl" + "pat-" + RANDOM.slice(0, 20)],
  ["slack-token", "xo" + "xb-" + "283746519-" + RANDOM.slice(0, 24)],
  ["slack-webhook", "https://hooks.slack.com/services/" + "T0AB1CD2E/B0FG3HI4J/" + RANDOM],
  ["npm-token", "//registry.npmjs.org/:_authToken=npm" + "_" + RANDOM],
  ["anthropic-key", "sk-" + "ant-api03-" + RANDOM + RANDOM],
  ["openai-key", "sk-" + "proj-" + RANDOM.slice(0, 24) + "T3Blbk" + "FJ" + RANDOM.slice(0, 24)],
  ["google-api-key", "AI" + "zaSyD-" + RANDOM.slice(0, 31)],
  ["stripe-key", "sk" + "_live_" + RANDOM.slice(0, 28)],
  ["jwt", "Bearer eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0." + RANDOM],
  [
    "private-key",
    `-----BEGIN RSA PRIVATE KEY-----\n${RANDOM}${RANDOM}\n-----END RSA PRIVATE KEY-----`,
  ],
  ["database-password", "AGENT_BUS_DB=postgres://bus:Zr7-q9Kx2v@db.internal:5432/bus"],
];

Deno.test("findSecrets() recognises each kind on the list, where it is", () => {
  for (const [kind, text] of EXAMPLES) {
    const found = findSecrets(text);
    assert.deepEqual(found.map((f) => f.kind), [kind], text);
    const redacted = screenSecrets(text, { mode: "redact", field: "x" });
    assert.ok(redacted.includes(`[redacted ${kind}]`), redacted);
    // Nothing of the secret's random part is left.
    assert.ok(!redacted.includes(RANDOM.slice(0, 12)), redacted);
  }
});

Deno.test("documented example keys and obvious placeholders are not secrets", () => {
  for (
    const text of [
      "AKIAIOSFODNN7EXAMPLE",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "gh" + "p_" + "A".repeat(36),
      "gh" + "p_" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456abcd",
      "gh" + "p_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "OPENAI_API_KEY=sk-your-key-here",
      "postgres://bus:password@localhost/bus",
      "postgres://bus:…@[::1]/bus",
      "postgres://bus:${PGPASSWORD}@db/bus",
      "postgres://bus@db/bus (the password comes from ~/.pgpass)",
      "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
      "-----BEGIN PRIVATE KEY-----\n<paste your key here>\n-----END PRIVATE KEY-----",
      "we store the token as ghp_… in the vault; use process.env.GITHUB_TOKEN",
    ]
  ) {
    assert.deepEqual(findSecrets(text), [], text);
  }
  assert.equal(isPlaceholder("AKIAIOSFODNN7EXAMPLE"), true);
  assert.equal(isPlaceholder(RANDOM), false);
});

Deno.test("a refusal names the kind and where, never the secret; allow keeps the text", () => {
  const text = `first line\nsecond: ${AWS_KEY}`;
  assert.throws(
    () => screenSecrets(text, { mode: "block", field: "outbox[1].content_markdown" }),
    (error: Error & { code?: string; context?: Record<string, unknown> }) => {
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, /^outbox\[1\]\.content_markdown at line 2, column 9 holds/);
      assert.match(error.message, /AWS access key \(aws-access-key\)/);
      assert.ok(!error.message.includes(AWS_KEY.slice(4)));
      assert.deepEqual(error.context, {
        field: "outbox[1].content_markdown",
        secret_kind: "aws-access-key",
        line: 2,
        column: 9,
      });
      return true;
    },
  );
  assert.equal(screenSecrets(text, { mode: "allow", field: "x" }), text);
});

Deno.test("every path refuses a credential with its dialect's error, and stores nothing", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const secret = `deploy with ${GITHUB} please`;

  // v6.3 sync: INVALID_ARGUMENT naming the outbox item.
  await using peer = await connectInProcess(dbPath, "peer");
  const { topic_id: topicId } = await peer.ok("topic_create", { name: "secrets" });
  await peer.ok("topic_join", { agent_name: "alice", topic_id: topicId });
  const refused = await peer.fail("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "fine" }, { content_markdown: secret }],
    wait_seconds: 0,
  });
  assert.equal(refused.code, "INVALID_ARGUMENT");
  assert.match(
    refused.message,
    /^outbox\[1\]\.content_markdown at line 1, column 13 holds a GitHub token/,
  );
  assert.ok(!refused.text.includes(RANDOM));
  const inMetadata = await peer.fail("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "see metadata", metadata: { env: { token: GITHUB } } }],
    wait_seconds: 0,
  });
  assert.match(inMetadata.message, /^outbox\[0\]\.metadata at line 1, column \d+ holds/);

  // The console's REST post and the CLI's post (a person).
  await using http = serveHttpInProcess(dbPath);
  const rest = await fetch(`${http.url}/api/topics/${topicId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content_markdown: secret }),
  });
  assert.equal(rest.status, 400);
  assert.match((await rest.json()).error.message, /holds a GitHub token \(github-token\)/);
  const posted = await cli(["post", String(topicId), secret], { AGENT_BUS_DB: dbPath });
  assert.equal(posted.code, 2, posted.stdout);
  assert.match(posted.stderr, /holds a GitHub token/);
  assert.ok(!posted.stderr.includes(RANDOM));

  // The AgentChatBus dialect: its content filter's error, over MCP and REST.
  await using chat = await connectInProcess(dbPath, "chatbus");
  const joined = await chat.ok("bus_connect", { thread_name: "chat", ide: "A", model: "m" });
  const thread = joined.thread as { thread_id: string };
  const sync = joined as unknown as { current_seq: number; reply_token: string };
  const chatRefused = await chat.fail("msg_post", {
    thread_id: thread.thread_id,
    author: (joined.agent as { agent_id: string }).agent_id,
    content: secret,
    expected_last_seq: sync.current_seq,
    reply_token: sync.reply_token,
  });
  assert.equal(chatRefused.code, "ContentFilterError");
  const asJson = JSON.parse(chatRefused.text);
  assert.equal(asJson.error, "ContentFilterError");
  assert.equal(asJson.pattern, "GitHub token");
  assert.match(asJson.detail, /^Content blocked: detected GitHub token in content at line 1/);
  const restChat = await fetch(`${http.url}/api/threads/${thread.thread_id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: secret }),
  });
  assert.equal(restChat.status, 400);
  assert.match((await restChat.json()).detail, /^Content blocked: detected GitHub token/);
  const fine = await (await fetch(`${http.url}/api/threads/${thread.thread_id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "nothing secret" }),
  })).json();
  const edit = await fetch(`${http.url}/api/messages/${fine.id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ new_content: secret, edited_by: "human" }),
  });
  assert.equal(edit.status, 400);
  assert.match(
    (await edit.json()).detail,
    /^Content blocked: detected GitHub token in new_content/,
  );
  const prompt = await chat.fail("thread_create", {
    topic: "with a prompt",
    agent_id: (joined.agent as { agent_id: string }).agent_id,
    token: (joined.agent as { token: string }).token,
    system_prompt: `Use ${AWS_KEY} for S3`,
  });
  assert.equal(prompt.code, "ContentFilterError");

  // Mail, the peer bus and teacher/student.
  await using mail = await connectInProcess(dbPath, "mailbox", { server: { agent: "bob" } });
  const mailRefused = await mail.fail("send_to_agent", { name: "carol", msg: secret });
  assert.equal(mailRefused.code, "INVALID_ARGUMENT");
  assert.match(mailRefused.message, /^msg at line 1, column 13 holds a GitHub token/);
  await using peerbus = await connectInProcess(dbPath, "peerbus", { server: { agent: "dave" } });
  const sent = await peerbus.fail("bus.send", { to: "bob", body: { note: secret } });
  assert.match(sent.message, /^body at line 1, column \d+ holds a GitHub token/);
  await using student = await connectInProcess(dbPath, "student");
  const asked = await student.fail("ask", {
    topic_id: topicId,
    question: `Why does ${AWS_KEY} not work?`,
    wait_seconds: 0,
  });
  assert.match(asked.message, /^question at line 1, column 10 holds an AWS access key/);

  // Nothing of it was stored anywhere, and a search finds nothing.
  const found = await peer.ok("messages_search", { query: "deploy please", mode: "fts" });
  assert.equal(found.count, 0, JSON.stringify(found));
  const dump = await cli(["export", String(topicId), "--format", "json"], { AGENT_BUS_DB: dbPath });
  assert.ok(!dump.stdout.includes(RANDOM));
});

Deno.test("AGENT_BUS_SECRETS=redact stores the message with the credential replaced; allow stores it", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using peer = await connectInProcess(dbPath, "peer", {
    env: { AGENT_BUS_SECRETS: "redact" },
  });
  const { topic_id: topicId } = await peer.ok("topic_create", { name: "redacted" });
  await peer.ok("topic_join", { agent_name: "alice", topic_id: topicId });
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: `keys: ${AWS_KEY} and ${GITHUB}` }],
    wait_seconds: 0,
  });
  const read = await peer.ok("messages_search", {
    query: "keys",
    mode: "fts",
    include_content: true,
  });
  const text = JSON.stringify(read);
  assert.ok(text.includes("[redacted aws-access-key]"), text);
  assert.ok(text.includes("[redacted github-token]"), text);
  assert.ok(!text.includes(RANDOM) && !text.includes(AWS_KEY), text);

  await using open = await connectInProcess(dbPath, "chatbus", {
    env: { AGENT_BUS_SECRETS: "allow" },
  });
  const joined = await open.ok("bus_connect", { thread_name: "allowed", ide: "A", model: "m" });
  const sync = joined as unknown as { current_seq: number; reply_token: string };
  await open.ok("msg_post", {
    thread_id: (joined.thread as { thread_id: string }).thread_id,
    author: (joined.agent as { agent_id: string }).agent_id,
    content: `kept: ${GITHUB}`,
    expected_last_seq: sync.current_seq,
    reply_token: sync.reply_token,
  });
  const listed = await open.call("msg_list", {
    thread_id: (joined.thread as { thread_id: string }).thread_id,
    return_format: "json",
  });
  assert.ok(JSON.stringify(listed).includes(GITHUB));
});
