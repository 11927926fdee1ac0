/**
 * `agent-bus hook`, run exactly as `install --hooks` writes it (through
 * `sh -c`, by a client process that also owns the agent's MCP server):
 * a stop is blocked while something new is unread, with who wrote, where,
 * the first lines and the tool call; the re-entry flag and the cap end the
 * loop; a prompt gets one line of context; each session sees only its own
 * unread; on call, a stop waits for a message; and the hook never fails
 * the client's turn.
 */

import assert from "node:assert/strict";
import { cli } from "../_helpers/cli.ts";
import { hookShell, runHook, startFakeClient } from "../_helpers/hook.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const post = async (db: string, topic: string, text: string, as = "codex") => {
  const posted = await cli(["post", topic, text, "--as", as], { AGENT_BUS_DB: db });
  assert.equal(posted.code, 0, posted.stderr);
};

const stop = (sessionId: string, cwd: string, active = false) => ({
  session_id: sessionId,
  transcript_path: "/dev/null",
  cwd,
  hook_event_name: "Stop",
  stop_hook_active: active,
});

Deno.test("the Stop hook blocks with the new message and the call that reads it, once per message, within the cap; the prompt hook adds one line", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  await using claude = await startFakeClient(db, {
    cwd: tmp.path,
    topic: "release-1.4",
    agent: "claude",
  });
  const onStop = hookShell(db, { client: "claude-code", event: "Stop", maxBlocks: 2 });

  // Nothing unread: the agent may stop.
  assert.deepEqual((await claude.hook(onStop, stop("s1", tmp.path))).out, {});

  await post(db, "release-1.4", "Can you review PR 42 before the release?\nIt touches the store.");
  const blocked = await claude.hook(onStop, stop("s1", tmp.path));
  assert.equal(blocked.code, 0);
  assert.equal(blocked.out.decision, "block");
  const reason = String(blocked.out.reason);
  assert.match(reason, /Topic "release-1\.4"/);
  assert.match(reason, /you are "claude"/);
  assert.match(
    reason,
    /codex: Can you review PR 42 before the release\? \/ It touches the store\./,
  );
  assert.ok(reason.includes(`sync(topic_id="${claude.topicId}")`), reason);

  // The model went on without reading it: the same message does not hold it again.
  assert.deepEqual((await claude.hook(onStop, stop("s1", tmp.path, true))).out, {});

  // A new message does, until the cap (2 stops in a row) lets it go.
  await post(db, "release-1.4", "Second thought: also check the docs.");
  assert.equal((await claude.hook(onStop, stop("s1", tmp.path, true))).out.decision, "block");
  await post(db, "release-1.4", "Third message.");
  assert.equal((await claude.hook(onStop, stop("s1", tmp.path, true))).out.decision, "block");
  await post(db, "release-1.4", "Fourth message.");
  assert.deepEqual((await claude.hook(onStop, stop("s1", tmp.path, true))).out, {});

  // The prompt hook says what waits, in one line.
  const onPrompt = hookShell(db, { client: "claude-code", event: "UserPromptSubmit" });
  const context = await claude.hook(onPrompt, {
    session_id: "s1",
    cwd: tmp.path,
    hook_event_name: "UserPromptSubmit",
    prompt: "hi",
  });
  assert.deepEqual(context.out, {
    hookSpecificOutput: {
      hookEventName: "UserPromptSubmit",
      additionalContext: "agent-bus: 4 unread on release-1.4 from codex; you are 'claude' there.",
    },
  });

  // Once the agent has read them (sync moves its cursor), nothing holds the stop.
  await claude.tool("sync", { topic_id: claude.topicId });
  assert.deepEqual((await claude.hook(onStop, stop("s2", tmp.path))).out, {});
  assert.deepEqual((await claude.hook(onPrompt, { session_id: "s2", cwd: tmp.path })).out, {});
});

Deno.test("two sessions in two working directories each see only their own unread", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const [dirA, dirB] = [`${tmp.path}/project-a`, `${tmp.path}/project-b`];
  await Deno.mkdir(dirA);
  await Deno.mkdir(dirB);
  await using a = await startFakeClient(db, { cwd: dirA, topic: "review", agent: "claude" });
  await using b = await startFakeClient(db, { cwd: dirB, topic: "review", agent: "gemini" });
  await post(db, "review", "Both of you: please look at PR 7.");
  const onPrompt = hookShell(db, { client: "claude-code", event: "UserPromptSubmit" });
  const line = async (client: typeof a, dir: string) =>
    (await client.hook(onPrompt, { session_id: dir, cwd: dir })).out;
  const contextOf = (out: Record<string, unknown>) =>
    (out.hookSpecificOutput as { additionalContext: string } | undefined)?.additionalContext;

  assert.equal(
    contextOf(await line(a, dirA)),
    "agent-bus: 1 unread on review from codex; you are 'claude' there.",
  );
  assert.equal(
    contextOf(await line(b, dirB)),
    "agent-bus: 1 unread on review from codex; you are 'gemini' there.",
  );

  // A reads; B still has it.
  await a.tool("sync", { topic_id: a.topicId });
  assert.deepEqual(await line(a, dirA), {});
  assert.match(contextOf(await line(b, dirB))!, /you are 'gemini' there/);

  // Run from a process that is neither client's child, the working directory decides.
  assert.deepEqual((await runHook(onPrompt, { cwd: dirA }, dirA)).out, {});
  assert.match(
    contextOf((await runHook(onPrompt, { cwd: dirB }, dirB)).out)!,
    /you are 'gemini' there/,
  );
  // And a directory with no session gets nothing.
  assert.deepEqual((await runHook(onPrompt, { cwd: tmp.path }, tmp.path)).out, {});
});

Deno.test("Gemini CLI's wire: AfterAgent denies with the reason, BeforeAgent and SessionStart add context", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  await using gemini = await startFakeClient(db, { cwd: tmp.path, topic: "t", agent: "gemini" });
  await post(db, "t", "ping from codex");
  const run = (event: string, input: Record<string, unknown>) =>
    gemini.hook(hookShell(db, { client: "gemini", event }), {
      session_id: "g1",
      cwd: tmp.path,
      hook_event_name: event,
      timestamp: new Date().toISOString(),
      ...input,
    });
  const after = await run("AfterAgent", {
    prompt: "hi",
    prompt_response: "done",
    stop_hook_active: false,
  });
  assert.equal(after.out.decision, "deny");
  assert.match(String(after.out.reason), /codex: ping from codex/);
  // Gemini CLI then runs BeforeAgent with the reason as the prompt: the news is not told twice.
  assert.deepEqual((await run("BeforeAgent", { prompt: after.out.reason })).out, {});
  for (const event of ["BeforeAgent", "SessionStart"]) {
    assert.deepEqual((await run(event, { prompt: "hi", source: "startup" })).out, {
      hookSpecificOutput: {
        hookEventName: event,
        additionalContext: "agent-bus: 1 unread on t from codex; you are 'gemini' there.",
      },
    });
  }
});

Deno.test("on call: a stop with nothing unread waits for a message and ends within a second of it; without one it lets go at the deadline", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  await using claude = await startFakeClient(db, {
    cwd: tmp.path,
    topic: "oncall",
    agent: "claude",
  });
  const quiet = await claude.hook(
    hookShell(db, { client: "claude-code", event: "Stop", wait: 1 }),
    stop("q", tmp.path),
  );
  assert.deepEqual(quiet.out, {});

  const onCall = hookShell(db, { client: "claude-code", event: "Stop", wait: 60 });
  const started = performance.now();
  const waiting = claude.hook(onCall, stop("c", tmp.path));
  // A message arrives a while later (this delay is the scenario, not a synchronisation).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const postedAt = performance.now();
  let ended = Infinity;
  let committedBy = 0;
  const [result] = await Promise.all([
    waiting.then((r) => {
      ended = performance.now();
      return r;
    }),
    // Timed from the CLI's exit, just after its commit: starting the CLI is not the hook's cost.
    post(db, "oncall", "Review ready: PR 9.").then(() => committedBy = performance.now()),
  ]);
  assert.equal(result.out.decision, "block");
  assert.match(String(result.out.reason), /codex: Review ready: PR 9\./);
  assert.ok(postedAt - started >= 1500, "the hook was still waiting when the message came");
  assert.ok(
    ended - committedBy < 1000,
    `the stop ended ${Math.round(ended - committedBy)} ms after the message was committed`,
  );
});

Deno.test("the hook never fails the client's turn: a broken database, bad input, no session", async () => {
  await using tmp = await tmpDir();
  const notADatabase = `${tmp.path}/not-a-db`;
  await Deno.writeTextFile(notADatabase, "this is not SQLite".repeat(100));
  const broken = await runHook(
    hookShell(notADatabase, { client: "claude-code", event: "Stop" }),
    stop("x", tmp.path),
  );
  assert.equal(broken.code, 0);
  assert.deepEqual(broken.out, {});

  const db = `${tmp.path}/bus.sqlite`;
  const onStop = hookShell(db, { client: "codex", event: "Stop" });
  for (const input of [{}, { cwd: 42, session_id: null, stop_hook_active: "yes" }]) {
    const result = await runHook(onStop, input, tmp.path);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.out, {});
  }
  // A wrong event is a configuration error the user should see: exit 1 (not 2, which blocks).
  const wrong = await runHook(hookShell(db, { client: "gemini", event: "Stop" }), {}, tmp.path);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /Name a client and one of its events/);
});

const onPostgres = Deno.env.get("AGENT_BUS_TEST_STORE") === "postgres";

Deno.test({
  name:
    `a hook is answered over its own database, never by the resident bus of another database in the same directory${
      onPostgres ? " (SQLite only: the bus of a database URL has a socket named after it)" : ""
    }`,
  ignore: onPostgres,
}, async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  // Another database's resident bus listens in this directory (on a socket of its own).
  await using elsewhere = await startPeer({ dbPath: `${tmp.path}/other.sqlite`, resident: true });
  await elsewhere.ok("topic_create", { name: "elsewhere" });
  await using claude = await startFakeClient(db, { cwd: tmp.path, topic: "mine", agent: "claude" });
  await post(db, "mine", "For claude, in this database.");
  const onStop = `AGENT_BUS_LOG_LEVEL=debug ${
    hookShell(db, { client: "claude-code", event: "Stop" })
  }`;
  const run = await claude.hook(onStop, stop("s", tmp.path));
  assert.equal(run.out.decision, "block", run.stderr);
  assert.match(String(run.out.reason), /For claude, in this database\./);
  assert.match(run.stderr, /no resident bus runs/, "the record says why no bus answered");
});
