/**
 * Teacher and student servers (seed 001) as real processes on one
 * database, driven by SDK clients: the tool sets, the question round trip
 * and its student-facing rendering, waiting asks, every error code and
 * warning of the contract, the limits, and topics shared with the peer bus.
 */

import assert from "node:assert/strict";
import { type Peer, startPeer, textOf, until } from "../_helpers/peer.ts";
import { connectInProcess, type InProcess } from "../_helpers/in_process.ts";
import { holdWriteLock, readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const TEACHER_TOOLS = [
  "ping",
  "teacher_drain",
  "teacher_publish",
  "topic_close",
  "topic_create",
  "topic_list",
];
const STUDENT_TOOLS = ["ask", "ask_cancel", "ask_poll", "ping", "topic_list", "topic_resolve"];

function startRole(dbPath: string, role: "teacher" | "student", env: Record<string, string> = {}) {
  return startPeer({ dbPath, env, args: ["--role", role] });
}

/** A role's server in this process (for tests that need no process boundary). */
function inProcessRole(
  dbPath: string,
  role: "teacher" | "student",
  env: Record<string, string> = {},
): Promise<InProcess> {
  return connectInProcess(dbPath, role, { env });
}

async function openTopic(teacher: Pick<Peer, "ok">, name = "pink"): Promise<string> {
  return (await teacher.ok("topic_create", { name })).topic_id as string;
}

Deno.test("each role lists exactly its seed tools and refuses the other role's", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await startRole(dbPath, "teacher");
  await using student = await startPeer({ dbPath, env: { MCP_ROLE: "student" } });
  const names = async (peer: Peer) =>
    (await peer.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(await names(teacher), TEACHER_TOOLS);
  assert.deepEqual(await names(student), STUDENT_TOOLS);
  for (const tool of ["ask", "ask_poll", "ask_cancel", "topic_resolve", "sync", "topic_join"]) {
    assert.equal((await teacher.fail(tool, {})).code, "INVALID_ARGUMENT", `teacher ${tool}`);
  }
  for (const tool of ["teacher_drain", "teacher_publish", "topic_create", "topic_close", "sync"]) {
    assert.equal((await student.fail(tool, {})).code, "INVALID_ARGUMENT", `student ${tool}`);
  }
  assert.deepEqual(await teacher.ok("ping"), { ok: true, role: "teacher", spec_version: "v3.1" });
  assert.deepEqual(await student.ok("ping"), { ok: true, role: "student", spec_version: "v3.1" });
});

Deno.test("the teacher sees the student's question; the student's poll renders FOLLOW_UP_REQUIRED without teacher notes or warnings", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await inProcessRole(dbPath, "teacher");
  await using student = await inProcessRole(dbPath, "student");
  const topicId = await openTopic(teacher);
  assert.equal((await student.ok("topic_resolve", { name: "pink" })).topic_id, topicId);

  const asked = await student.call("ask", {
    topic_id: topicId,
    question: "Where does the store live?",
  });
  const queued = asked.structuredContent as { question_id: string; status: string };
  assert.equal(queued.status, "queued");
  assert.match(textOf(asked), /ask_poll/);

  const drained = await teacher.call("teacher_drain", { topic_id: topicId });
  const pending =
    (drained.structuredContent as { pending: { question_id: string; question_text: string }[] })
      .pending;
  assert.deepEqual(pending.map((q) => [q.question_id, q.question_text]), [[
    queued.question_id,
    "Where does the store live?",
  ]]);
  assert.match(textOf(drained), /Where does the store live\?/);

  const followups = ["How are migrations run?", "f2", "f3", "f4", "f5", "f6", "f7"];
  const published = await teacher.call("teacher_publish", {
    topic_id: topicId,
    responses: [{
      question_id: queued.question_id,
      answer_markdown: "In `lib/store`.",
      repo_pointers: Array.from({ length: 11 }, (_, i) => `lib/store/f${i}.ts`),
      suggested_followups: followups,
      teacher_notes: "TOP-SECRET-NOTE",
    }],
  });
  const publishOut = published.structuredContent as {
    saved: number;
    skipped: number;
    warnings: { code: string }[];
  };
  assert.equal(publishOut.saved, 1);
  assert.equal(publishOut.skipped, 0);
  assert.deepEqual(publishOut.warnings.map((w) => w.code), [
    "REPO_POINTERS_TRUNCATED",
    "FOLLOWUPS_TRUNCATED",
  ]);
  assert.match(textOf(published), /FOLLOWUPS_TRUNCATED/, "teacher text may mention warnings");

  const polled = await student.call("ask_poll", {
    topic_id: topicId,
    question_id: queued.question_id,
  });
  const text = textOf(polled);
  assert.equal(
    text,
    [
      "In `lib/store`.",
      "",
      "---",
      "FOLLOW_UP_REQUIRED",
      "Choose ONE follow-up question and call:",
      `ask(topic_id="${topicId}", question="<your question>")`,
      "",
      "Suggested follow-ups:",
      "1) How are migrations run?",
      "2) f2",
      "3) f3",
      "4) f4",
      "5) f5",
      "",
      "If you fully understand, reply with:",
      "NO_FOLLOWUP_NEEDED",
      "and provide a 3-5 bullet summary of what you learned.",
    ].join("\n"),
  );
  const state = polled.structuredContent as Record<string, unknown>;
  assert.equal(state.status, "answered");
  assert.equal(state.rendered_answer, text);
  assert.deepEqual(
    (state.answer_payload as { suggested_followups: string[] }).suggested_followups,
    followups.slice(0, 5),
  );
  assert.doesNotMatch(JSON.stringify(polled), /TOP-SECRET-NOTE|teacher_notes|TRUNCATED/);
  // The note is stored, for teachers.
  const [stored] = await readRows(dbPath, "SELECT answer_payload_json FROM questions") as {
    answer_payload_json: string;
  }[];
  assert.equal(JSON.parse(stored!.answer_payload_json).teacher_notes, "TOP-SECRET-NOTE");
});

Deno.test("a waiting ask returns answered as soon as a teacher in another process publishes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await startRole(dbPath, "teacher");
  await using student = await startRole(dbPath, "student", { AGENT_BUS_LOG_LEVEL: "debug" });
  const topicId = await openTopic(teacher);
  const waiting = student.call("ask", {
    topic_id: topicId,
    question: "What is sync?",
    wait_seconds: 60,
  });
  await until(() => student.stderr().includes("ask waiting"), { what: "the ask to wait" });
  const drained = await teacher.ok("teacher_drain", { topic_id: topicId, wait_seconds: 10 });
  const [question] = drained.pending as { question_id: string }[];
  await teacher.ok("teacher_publish", {
    topic_id: topicId,
    responses: [{
      question_id: question!.question_id,
      answer_markdown: "Send and receive.",
      suggested_followups: ["Why?"],
    }],
  });
  const result = await waiting;
  const state = result.structuredContent as { status: string; question_id: string };
  assert.equal(state.status, "answered");
  assert.equal(state.question_id, question!.question_id);
  assert.match(textOf(result), /^Send and receive\.\n\n---\nFOLLOW_UP_REQUIRED\n/);
  assert.match(textOf(result), /1\) Why\?/);
});

Deno.test("a waiting teacher_drain wakes for a new question; a cancelled ask stops waiting and leaves the question pending", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await startRole(dbPath, "teacher", { AGENT_BUS_LOG_LEVEL: "debug" });
  await using student = await startRole(dbPath, "student", { AGENT_BUS_LOG_LEVEL: "debug" });
  const topicId = await openTopic(teacher);
  const draining = teacher.ok("teacher_drain", { topic_id: topicId, wait_seconds: 60 });
  await until(() => teacher.stderr().includes("teacher_drain waiting"), {
    what: "the drain to wait",
  });
  const controller = new AbortController();
  const asking = student.call("ask", { topic_id: topicId, question: "Anyone?", wait_seconds: 60 }, {
    signal: controller.signal,
  }).catch((error: unknown) => error);
  const { pending } = await draining as { pending: { question_id: string }[] };
  assert.equal(pending.length, 1);
  await until(() => student.stderr().includes("ask waiting"), { what: "the ask to wait" });
  const started = Date.now();
  controller.abort();
  assert.ok(await asking instanceof Error, "the cancelled call rejects on the client");
  assert.ok(Date.now() - started < 5_000);
  const polled = await student.ok("ask_poll", {
    topic_id: topicId,
    question_id: pending[0]!.question_id,
  });
  assert.equal(polled.status, "pending");
});

Deno.test("every error code of the contract comes back as isError with structuredContent.error", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await inProcessRole(dbPath, "teacher", {
    AGENT_BUS_BUSY_TIMEOUT_MS: "200",
  });
  await using student = await inProcessRole(dbPath, "student");
  const topicId = await openTopic(teacher);
  const otherId = await openTopic(teacher, "other");
  const { question_id } = await student.ok("ask", { topic_id: topicId, question: "q" });

  assert.equal(
    (await student.fail("ask", { topic_id: "missing", question: "q" })).code,
    "TOPIC_NOT_FOUND",
  );
  assert.equal(
    (await teacher.fail("teacher_drain", { topic_id: "missing" })).code,
    "TOPIC_NOT_FOUND",
  );
  assert.equal(
    (await teacher.fail("teacher_publish", {
      topic_id: "missing",
      responses: [{ question_id, answer_markdown: "a", suggested_followups: [] }],
    })).code,
    "TOPIC_NOT_FOUND",
  );
  assert.equal(
    (await teacher.fail("topic_close", { topic_id: "missing" })).code,
    "TOPIC_NOT_FOUND",
  );
  assert.equal(
    (await student.fail("ask_poll", { topic_id: topicId, question_id: "nope" })).code,
    "QUESTION_NOT_FOUND",
  );
  assert.equal(
    (await student.fail("ask_cancel", { topic_id: topicId, question_id: "nope" })).code,
    "QUESTION_NOT_FOUND",
  );
  const mismatch = await student.fail("ask_poll", { topic_id: otherId, question_id });
  assert.equal(mismatch.code, "TOPIC_MISMATCH");
  assert.equal(mismatch.structured.question_topic_id, topicId);
  assert.equal(
    (await student.fail("ask_cancel", { topic_id: otherId, question_id })).code,
    "TOPIC_MISMATCH",
  );
  assert.equal(
    (await student.fail("ask", { topic_id: topicId, question: "" })).code,
    "INVALID_ARGUMENT",
  );
  assert.equal((await student.fail("ask", { topic_id: topicId })).code, "INVALID_ARGUMENT");
  assert.equal(
    (await teacher.fail("teacher_publish", {
      topic_id: topicId,
      responses: [{ question_id, answer_markdown: "a" }],
    }))
      .code,
    "INVALID_ARGUMENT",
    "suggested_followups is required",
  );

  // Answered questions cannot be cancelled.
  await teacher.ok("teacher_publish", {
    topic_id: topicId,
    responses: [{ question_id, answer_markdown: "a", suggested_followups: [] }],
  });
  assert.equal(
    (await student.fail("ask_cancel", { topic_id: topicId, question_id })).code,
    "INVALID_ARGUMENT",
  );

  // Closed: no new questions; closing again warns and keeps the first reason and time.
  const closed = await teacher.ok("topic_close", { topic_id: topicId, reason: "done" });
  const again = await teacher.call("topic_close", { topic_id: topicId, reason: "other" });
  const againOut = again.structuredContent as Record<string, unknown>;
  assert.equal(againOut.close_reason, "done");
  assert.equal(againOut.closed_at, closed.closed_at);
  assert.equal((againOut.warnings as { code: string }[])[0]!.code, "ALREADY_CLOSED");
  assert.equal(
    (await student.fail("ask", { topic_id: topicId, question: "late" })).code,
    "TOPIC_CLOSED",
  );

  // Another program holding the write lock: DB_BUSY, nothing half-done.
  const release = await holdWriteLock(dbPath);
  try {
    assert.equal((await teacher.fail("topic_create", { name: "blocked" })).code, "DB_BUSY");
  } finally {
    await release();
  }
  assert.equal((await teacher.ok("topic_create", { name: "after" })).name, "after");
});

Deno.test("ask_cancel is idempotent: ALREADY_CANCELLED, first reason kept, no warning in the student's text", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await inProcessRole(dbPath, "teacher");
  await using student = await inProcessRole(dbPath, "student");
  const topicId = await openTopic(teacher);
  const { question_id } = await student.ok("ask", { topic_id: topicId, question: "q" });
  const first = await student.ok("ask_cancel", {
    topic_id: topicId,
    question_id,
    reason: "solved",
  });
  assert.deepEqual(first, {
    topic_id: topicId,
    question_id,
    status: "cancelled",
    cancel_reason: "solved",
  });
  const again = await student.call("ask_cancel", {
    topic_id: topicId,
    question_id,
    reason: "other",
  });
  const out = again.structuredContent as Record<string, unknown>;
  assert.equal(out.cancel_reason, "solved");
  assert.deepEqual(
    (out.warnings as { code: string; context: unknown }[]).map((w) => [w.code, w.context]),
    [[
      "ALREADY_CANCELLED",
      { question_id, cancel_reason: "solved" },
    ]],
  );
  assert.doesNotMatch(textOf(again), /ALREADY_CANCELLED|warning/i);
  assert.deepEqual((await teacher.ok("teacher_drain", { topic_id: topicId })).pending, []);
  const polled = await student.ok("ask_poll", { topic_id: topicId, question_id });
  assert.equal(polled.status, "cancelled");
  assert.equal(polled.cancel_reason, "solved");
});

Deno.test("hard limits come from their variables, and a publish batch with one bad item changes nothing", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = {
    AGENT_BUS_MAX_QUESTION_CHARS: "50",
    AGENT_BUS_MAX_ANSWER_CHARS: "100",
    AGENT_BUS_MAX_TEACHER_NOTES_CHARS: "20",
    AGENT_BUS_MAX_PUBLISH_BATCH: "2",
  };
  await using teacher = await inProcessRole(dbPath, "teacher", env);
  await using student = await inProcessRole(dbPath, "student", env);
  const topicId = await openTopic(teacher);
  assert.equal(
    (await student.fail("ask", { topic_id: topicId, question: "x".repeat(51) })).code,
    "INVALID_ARGUMENT",
  );
  const ids = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await student.ok("ask", { topic_id: topicId, question: `q${i}` })).question_id);
  }
  const item = (id: unknown, extra: Record<string, unknown> = {}) => ({
    question_id: id,
    answer_markdown: "fine",
    suggested_followups: ["next?"],
    ...extra,
  });
  const bad = [
    [item(ids[0]), item(ids[1], { answer_markdown: "y".repeat(101) })],
    [item(ids[0]), item(ids[1], { teacher_notes: "n".repeat(21) })],
    [item(ids[0]), item(ids[1], { suggested_followups: "not a list" })],
    [item(ids[0]), item(ids[1], { repo_pointers: Array(101).fill("p") })],
    [item(ids[0]), item(ids[1]), item(ids[2])],
    [],
  ];
  for (const responses of bad) {
    const failure = await teacher.fail("teacher_publish", { topic_id: topicId, responses });
    assert.equal(failure.code, "INVALID_ARGUMENT", JSON.stringify(responses).slice(0, 200));
  }
  const { pending } = await teacher.ok("teacher_drain", { topic_id: topicId });
  assert.equal((pending as unknown[]).length, 3, "nothing was answered");
  assert.equal(
    (await student.ok("ask_poll", { topic_id: topicId, question_id: ids[0] })).status,
    "pending",
  );
  const ok = await teacher.ok("teacher_publish", {
    topic_id: topicId,
    responses: [item(ids[0]), item(ids[1])],
  });
  assert.deepEqual(ok, { saved: 2, skipped: 0 });
});

Deno.test("teacher topics are the peer bus's topics: listed by peers, closed for both", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using teacher = await inProcessRole(dbPath, "teacher");
  await using student = await inProcessRole(dbPath, "student");
  await using peer = await connectInProcess(dbPath, "peer");
  const topicId = await openTopic(teacher, "shared");
  const listed = (await peer.ok("topic_list")).topics as { topic_id: string }[];
  assert.ok(listed.some((t) => t.topic_id === topicId));
  await peer.ok("topic_close", { topic_id: topicId, reason: "from the peer side" });
  assert.equal(
    (await student.fail("ask", { topic_id: topicId, question: "still there?" })).code,
    "TOPIC_CLOSED",
  );
  const teacherView = (await teacher.ok("topic_list", { status: "closed" })).topics as {
    topic_id: string;
    close_reason: string;
  }[];
  assert.deepEqual(teacherView.map((t) => [t.topic_id, t.close_reason]), [[
    topicId,
    "from the peer side",
  ]]);
});

Deno.test("teacher_addendum reaches the student after the answer; teacher_notes never do", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using teacher = await connectInProcess(path, "teacher");
  await using student = await connectInProcess(path, "student");
  const created = await teacher.client.callTool({
    name: "topic_create",
    arguments: { name: "addendum" },
  });
  const topicId = (created.structuredContent as { topic_id: string }).topic_id;
  const asked = await student.client.callTool({
    name: "ask",
    arguments: { topic_id: topicId, question: "Where are the tests?" },
  });
  const questionId = (asked.structuredContent as { question_id: string }).question_id;
  const published = await teacher.client.callTool({
    name: "teacher_publish",
    arguments: {
      topic_id: topicId,
      responses: [{
        question_id: questionId,
        answer_markdown: "In `tests/`.",
        suggested_followups: ["How do they run?"],
        teacher_addendum: "Tip: `deno task ok` runs them all.",
        teacher_notes: "SECRET",
      }],
    },
  });
  assert.notEqual(published.isError, true, JSON.stringify(published.structuredContent));
  const polled = await student.client.callTool({
    name: "ask_poll",
    arguments: { topic_id: topicId, question_id: questionId },
  });
  const text = (polled.content as { text: string }[])[0]!.text;
  assert.ok(
    text.startsWith(
      "In `tests/`.\n\nTip: `deno task ok` runs them all.\n\n---\nFOLLOW_UP_REQUIRED",
    ),
    text,
  );
  const payload = (polled.structuredContent as { answer_payload: Record<string, unknown> })
    .answer_payload;
  assert.equal(payload.teacher_addendum, "Tip: `deno task ok` runs them all.");
  assert.doesNotMatch(JSON.stringify(polled), /SECRET|teacher_notes/);
});
