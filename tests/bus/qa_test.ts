/**
 * Teacher/student questions in process (seed 001, section 11.1): asking,
 * draining, publishing, cancelling, closed topics, limits, and what a
 * student may never see.
 */

import assert from "node:assert/strict";
import {
  ask,
  cancelAsk,
  drainQuestions,
  pollQuestion,
  publishAnswers,
  renderStudentAnswer,
} from "../../lib/bus/qa.ts";
import { closeTopic, createTopic, resolveTopic } from "../../lib/bus/topics.ts";
import { BusError } from "../../lib/errors.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function hasCode(code: string) {
  return (error: unknown) => error instanceof BusError && error.code === code;
}

async function setup(dir: string) {
  const bus = openTestBus(`${dir}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "pink", mode: "reuse" });
  const askOne = async (question: string) =>
    (await ask(bus, { topicId: topic.topic_id, question, askedBy: "student", waitSeconds: 0 }))
      .state;
  return { bus, topicId: topic.topic_id, askOne };
}

const answer = (questionId: string, extra: Record<string, unknown> = {}) => ({
  question_id: questionId,
  answer_markdown: `Answer to ${questionId}`,
  suggested_followups: ["How is X implemented?", "Where is Y configured?"],
  ...extra,
});

Deno.test("a question is created on a topic resolved by name and drained oldest first", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  assert.equal(resolveTopic(bus, { name: "pink", allowClosed: false }).topic_id, topicId);
  const first = await askOne("What does the store do?");
  const second = await askOne("Where are migrations?");
  assert.equal(first.status, "queued");
  const { pending } = await drainQuestions(bus, { topicId, limit: 20, waitSeconds: 0 });
  assert.deepEqual(pending.map((q) => q.question_id), [first.question_id, second.question_id]);
  assert.equal(pending[0]!.question_text, "What does the store do?");
  assert.equal(pending[0]!.status, "pending");
  assert.equal(pollQuestion(bus, { topicId, questionId: first.question_id }).status, "pending");
  await assert.rejects(
    drainQuestions(bus, { topicId: "nope", limit: 20, waitSeconds: 0 }),
    hasCode("TOPIC_NOT_FOUND"),
  );
});

Deno.test("publish stores the payload JSON, answers only pending questions of the topic, and skips the rest", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  const q1 = await askOne("one");
  const q2 = await askOne("two");
  const { topic: other } = await createTopic(bus, { name: "other", mode: "new" });
  const foreign =
    (await ask(bus, { topicId: other.topic_id, question: "x", askedBy: "s", waitSeconds: 0 }))
      .state;
  await cancelAsk(bus, { topicId, questionId: q2.question_id });

  const result = await publishAnswers(bus, {
    topicId,
    answeredBy: "teacher",
    responses: [
      answer(q1.question_id, { repo_pointers: ["lib/store/mod.ts"], teacher_notes: "secret" }),
      answer(q2.question_id),
      answer(foreign.question_id),
      answer("missing"),
      answer(q1.question_id),
    ],
  });
  assert.equal(result.saved, 1);
  assert.deepEqual(result.skipped.map((s) => s.reason), [
    "cancelled",
    "topic_mismatch",
    "not_found",
    "answered",
  ]);
  assert.deepEqual(result.warnings, []);

  const row = (await readRows(`${tmp.path}/bus.sqlite`, "SELECT * FROM questions"))
    .find((r) => r.question_id === q1.question_id)!;
  assert.equal(row.status, "answered");
  assert.equal(row.answered_by, "teacher");
  assert.equal(typeof row.answered_at, "number");
  assert.deepEqual(JSON.parse(row.answer_payload_json as string), {
    answer_markdown: `Answer to ${q1.question_id}`,
    repo_pointers: ["lib/store/mod.ts"],
    suggested_followups: ["How is X implemented?", "Where is Y configured?"],
    teacher_notes: "secret",
  });
  const state = pollQuestion(bus, { topicId, questionId: q1.question_id });
  assert.equal(state.status, "answered");
  assert.deepEqual(Object.keys(state.answer_payload!).sort(), [
    "answer_markdown",
    "repo_pointers",
    "suggested_followups",
  ]);
  assert.doesNotMatch(JSON.stringify(state), /secret|teacher_notes/);
  assert.deepEqual((await drainQuestions(bus, { topicId, limit: 20, waitSeconds: 0 })).pending, []);
});

Deno.test("lists over the soft limits are cut, with a warning naming the question and the counts", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  const q = await askOne("many");
  const followups = Array.from({ length: 7 }, (_, i) => `follow-up ${i + 1}`);
  const pointers = Array.from({ length: 12 }, (_, i) => `src/file${i}.ts`);
  const { saved, warnings } = await publishAnswers(bus, {
    topicId,
    answeredBy: "teacher",
    responses: [answer(q.question_id, { suggested_followups: followups, repo_pointers: pointers })],
  });
  assert.equal(saved, 1);
  assert.deepEqual(warnings.map((w) => [w.code, w.context]), [
    ["REPO_POINTERS_TRUNCATED", { question_id: q.question_id, original_count: 12, kept_count: 10 }],
    ["FOLLOWUPS_TRUNCATED", { question_id: q.question_id, original_count: 7, kept_count: 5 }],
  ]);
  const payload = pollQuestion(bus, { topicId, questionId: q.question_id }).answer_payload!;
  assert.deepEqual(payload.suggested_followups, followups.slice(0, 5));
  assert.deepEqual(payload.repo_pointers, pointers.slice(0, 10));
});

Deno.test("cancel moves pending to cancelled once, keeps the first reason, refuses answered ones", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  const q = await askOne("never mind");
  const first = await cancelAsk(bus, {
    topicId,
    questionId: q.question_id,
    reason: "figured it out",
  });
  assert.deepEqual(first.state, {
    topic_id: topicId,
    question_id: q.question_id,
    status: "cancelled",
    cancel_reason: "figured it out",
  });
  assert.deepEqual(first.warnings, []);
  const again = await cancelAsk(bus, {
    topicId,
    questionId: q.question_id,
    reason: "other reason",
  });
  assert.equal(again.state.cancel_reason, "figured it out");
  assert.equal(again.warnings[0]!.code, "ALREADY_CANCELLED");
  assert.deepEqual(again.warnings[0]!.context, {
    question_id: q.question_id,
    cancel_reason: "figured it out",
  });
  assert.deepEqual((await drainQuestions(bus, { topicId, limit: 20, waitSeconds: 0 })).pending, []);
  assert.equal(pollQuestion(bus, { topicId, questionId: q.question_id }).status, "cancelled");

  const answered = await askOne("real question");
  await publishAnswers(bus, {
    topicId,
    answeredBy: "t",
    responses: [answer(answered.question_id)],
  });
  await assert.rejects(
    cancelAsk(bus, { topicId, questionId: answered.question_id }),
    hasCode("INVALID_ARGUMENT"),
  );
  await assert.rejects(
    cancelAsk(bus, { topicId, questionId: "nope" }),
    hasCode("QUESTION_NOT_FOUND"),
  );
  const { topic: other } = await createTopic(bus, { name: "other", mode: "new" });
  await assert.rejects(
    cancelAsk(bus, { topicId: other.topic_id, questionId: answered.question_id }),
    hasCode("TOPIC_MISMATCH"),
  );
  assert.throws(
    () => pollQuestion(bus, { topicId: other.topic_id, questionId: answered.question_id }),
    hasCode("TOPIC_MISMATCH"),
  );
  assert.throws(
    () => pollQuestion(bus, { topicId, questionId: "nope" }),
    hasCode("QUESTION_NOT_FOUND"),
  );
});

Deno.test("a closed topic refuses new questions but lets the backlog be drained, answered and polled", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  const q = await askOne("before the close");
  await closeTopic(bus, { topicId, reason: "done" });
  await assert.rejects(askOne("after the close"), hasCode("TOPIC_CLOSED"));
  await assert.rejects(
    ask(bus, { topicId: "missing", question: "x", askedBy: "s", waitSeconds: 0 }),
    hasCode("TOPIC_NOT_FOUND"),
  );
  const { pending } = await drainQuestions(bus, { topicId, limit: 20, waitSeconds: 0 });
  assert.deepEqual(pending.map((p) => p.question_id), [q.question_id]);
  assert.equal(
    (await publishAnswers(bus, { topicId, answeredBy: "t", responses: [answer(q.question_id)] }))
      .saved,
    1,
  );
  assert.equal(pollQuestion(bus, { topicId, questionId: q.question_id }).status, "answered");
  assert.throws(
    () => resolveTopic(bus, { name: "pink", allowClosed: false }),
    hasCode("TOPIC_NOT_FOUND"),
  );
  assert.equal(resolveTopic(bus, { name: "pink", allowClosed: true }).topic_id, topicId);
});

Deno.test("a blank question is refused and nothing is stored", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId } = await setup(tmp.path);
  await using _ = bus;
  await assert.rejects(
    ask(bus, { topicId, question: "  \n", askedBy: "s", waitSeconds: 0 }),
    hasCode("INVALID_ARGUMENT"),
  );
  assert.deepEqual((await drainQuestions(bus, { topicId, limit: 20, waitSeconds: 0 })).pending, []);
});

Deno.test("renderStudentAnswer() follows the seed's template to the letter", () => {
  const text = renderStudentAnswer("abc123", {
    answer_markdown: "The store lives in `lib/store`.",
    repo_pointers: ["lib/store/mod.ts"],
    suggested_followups: ["How are\nmigrations run?", "b", "c", "d", "e", "f"],
  });
  assert.equal(
    text,
    `The store lives in \`lib/store\`.

---
FOLLOW_UP_REQUIRED
Choose ONE follow-up question and call:
ask(topic_id="abc123", question="<your question>")

Suggested follow-ups:
1) How are migrations run?
2) b
3) c
4) d
5) e

If you fully understand, reply with:
NO_FOLLOWUP_NEEDED
and provide a 3-5 bullet summary of what you learned.`,
  );
});

Deno.test("a waiting ask ends as cancelled when its question is withdrawn meanwhile", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId } = await setup(tmp.path);
  await using _ = bus;
  const waiting = ask(bus, { topicId, question: "slow one", askedBy: "s", waitSeconds: 30 });
  const { pending } = await drainQuestions(bus, { topicId, limit: 1, waitSeconds: 5 });
  await cancelAsk(bus, { topicId, questionId: pending[0]!.question_id, reason: "too slow" });
  const { state } = await waiting;
  assert.deepEqual(state, {
    topic_id: topicId,
    question_id: pending[0]!.question_id,
    status: "cancelled",
    cancel_reason: "too slow",
  });
});

Deno.test("the hard size limits hold in the bus, for every surface, and save nothing", async () => {
  await using tmp = await tmpDir();
  const { bus, topicId, askOne } = await setup(tmp.path);
  await using _ = bus;
  const { maxQuestionChars, maxAnswerChars, maxTeacherNotesChars, maxPublishBatch } = bus.config.qa;
  await assert.rejects(askOne("q".repeat(maxQuestionChars + 1)), hasCode("INVALID_ARGUMENT"));
  const { question_id } = await askOne("fits");
  const bad: Record<string, unknown>[] = [
    { answer_markdown: "a".repeat(maxAnswerChars + 1) },
    { teacher_notes: "n".repeat(maxTeacherNotesChars + 1) },
    { teacher_addendum: "n".repeat(maxTeacherNotesChars + 1) },
    { suggested_followups: Array.from({ length: 101 }, () => "f") },
    { repo_pointers: ["p".repeat(1001)] },
  ];
  for (const extra of bad) {
    await assert.rejects(
      publishAnswers(bus, {
        topicId,
        answeredBy: "teacher",
        responses: [answer(question_id, extra) as never],
      }),
      hasCode("INVALID_ARGUMENT"),
      Object.keys(extra)[0],
    );
  }
  await assert.rejects(
    publishAnswers(bus, {
      topicId,
      answeredBy: "teacher",
      responses: Array.from({ length: maxPublishBatch + 1 }, () => answer(question_id)),
    }),
    hasCode("INVALID_ARGUMENT"),
  );
  assert.equal(pollQuestion(bus, { topicId, questionId: question_id }).status, "pending");
});
