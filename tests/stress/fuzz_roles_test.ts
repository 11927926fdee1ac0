/**
 * Bad-input fuzzing of the teacher and student servers: random and
 * adversarial calls to every tool of both roles on one database. Neither
 * server dies, every error has a code of the contract, no student result
 * ever carries teacher notes, and the database passes PRAGMA
 * integrity_check.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { profile } from "../../lib/mcp/profiles/mod.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { fuzzer, NASTY_STRINGS } from "./_fuzz.ts";
import { prng, SEED, size } from "./_size.ts";

const CALLS = size(3000, 600);
const KNOWN_CODES = new Set([
  "TOPIC_NOT_FOUND",
  "TOPIC_CLOSED",
  "QUESTION_NOT_FOUND",
  "TOPIC_MISMATCH",
  "INVALID_ARGUMENT",
  "DB_BUSY",
]);
const SECRET = "NOTE-FOR-TEACHERS-ONLY";

Deno.test(`teacher and student survive ${CALLS} random and adversarial calls (seed ${SEED})`, async () => {
  const random = prng(SEED + 3);
  const { pick, value } = fuzzer(random);
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/fuzz.sqlite`;
  const env = { AGENT_BUS_MAX_WAIT_SECONDS: "0" };
  await using teacher = await startPeer({ dbPath, env, args: ["--role", "teacher"] });
  await using student = await startPeer({ dbPath, env, args: ["--role", "student"] });
  const topicId = (await teacher.ok("topic_create", { name: "fuzz" })).topic_id as string;
  const questionIds = [
    (await student.ok("ask", { topic_id: topicId, question: "seed" })).question_id as string,
  ];

  const base = (tool: string): Record<string, unknown> => {
    const questionId = random() < 0.8 ? pick(questionIds) : pick(NASTY_STRINGS);
    switch (tool) {
      case "topic_create":
        return { name: "fuzz", mode: pick(["reuse", "new"]) };
      case "topic_list":
        return { status: "all" };
      case "topic_resolve":
        return { name: "fuzz", allow_closed: true };
      case "topic_close":
        return { topic_id: topicId, reason: "maybe" };
      case "teacher_drain":
        return { topic_id: topicId, limit: 5 };
      case "teacher_publish":
        return {
          topic_id: topicId,
          responses: [{
            question_id: questionId,
            answer_markdown: "answer",
            suggested_followups: Array.from(
              { length: Math.floor(random() * 8) },
              (_, i) => `f${i}`,
            ),
            repo_pointers: Array.from({ length: Math.floor(random() * 13) }, (_, i) => `p${i}`),
            teacher_notes: SECRET,
          }],
        };
      case "ask":
        return { topic_id: topicId, question: pick(["why?", ...NASTY_STRINGS]) };
      case "ask_poll":
      case "ask_cancel":
        return { topic_id: topicId, question_id: questionId };
      default:
        return {};
    }
  };

  let errors = 0;
  for (let i = 0; i < CALLS; i++) {
    const [server, tools] = random() < 0.5
      ? [teacher, profile("teacher").tools.map((t) => t.name)]
      : [student, profile("student").tools.map((t) => t.name)];
    const tool = random() < 0.03 ? pick(["", "sync", "ask ", "teacher_drain"]) : pick(tools);
    const args = base(tool);
    const mutation = random();
    const keys = Object.keys(args);
    if (mutation < 0.35 && keys.length > 0) args[pick(keys)] = value();
    else if (mutation < 0.45) args[pick(["extra", "__proto__", "role"])] = value();
    else if (mutation < 0.55 && keys.length > 0) delete args[pick(keys)];
    const result = await server.call(tool, args);
    if (server === student) {
      assert.doesNotMatch(
        JSON.stringify(result),
        new RegExp(SECRET),
        `call ${i}: teacher notes leaked`,
      );
    }
    if (result.isError) {
      errors++;
      const error = (result.structuredContent as { error?: { code?: string } })?.error;
      assert.ok(
        error?.code && KNOWN_CODES.has(error.code),
        `call ${i}: ${JSON.stringify(result).slice(0, 400)}`,
      );
    } else if (tool === "ask") {
      questionIds.push((result.structuredContent as { question_id: string }).question_id);
    }
  }
  assert.ok(errors > CALLS / 10 && errors < CALLS, `a useful mix: ${errors} errors of ${CALLS}`);
  assert.equal((await teacher.ok("ping")).role, "teacher");
  assert.equal((await student.ok("ping")).role, "student");
  assert.doesNotMatch(teacher.stderr() + student.stderr(), /failed unexpectedly|Uncaught|panicked/);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const check = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
  db.close();
  assert.equal(check.integrity_check, "ok");
});
