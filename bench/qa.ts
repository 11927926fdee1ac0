/**
 * Answer latency of the teacher/student roles: a student process waits in
 * `ask(wait_seconds=30)`; a teacher process publishes the answer. Measured
 * from the teacher's `teacher_publish` call to the student's result.
 *
 * @module
 */

import { startPeer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution, waitForLog } from "./_stats.ts";

/** Run `samples` question/answer round trips on a fresh database in `dir`. */
export async function benchAnswerLatency(dir: string, samples: number): Promise<Distribution> {
  const dbPath = `${dir}/qa.sqlite`;
  await using teacher = await startPeer({ dbPath, args: ["--role", "teacher"] });
  await using student = await startPeer({
    dbPath,
    args: ["--role", "student"],
    env: { AGENT_BUS_LOG_LEVEL: "debug" },
  });
  const { topic_id } = await teacher.ok("topic_create", { name: "onboarding" });
  const warmup = 10;
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const waiting = student.call("ask", { topic_id, question: `question ${i}`, wait_seconds: 30 });
    await waitForLog(student, "ask waiting", i + 1); // the student is really blocked
    const { pending } = await teacher.ok("teacher_drain", { topic_id, limit: 1 });
    const [question] = pending as { question_id: string }[];
    const started = performance.now();
    await teacher.ok("teacher_publish", {
      topic_id,
      responses: [{
        question_id: question!.question_id,
        answer_markdown: `answer ${i}`,
        suggested_followups: ["next?"],
      }],
    });
    const result = await waiting;
    const elapsed = performance.now() - started;
    if ((result.structuredContent as { status: string }).status !== "answered") {
      throw new Error(`sample ${i}: the student got no answer`);
    }
    if (i >= warmup) times.push(elapsed);
  }
  return distribution(times);
}
