/**
 * What the hooks report for a recorded session, item by item, on a real
 * store: a settled answer to a question the session asked (until the
 * agent has seen it), questions waiting for a teacher, mail for a
 * peer-bus name; and which records are "this hook's" (nearest ancestor,
 * else the working directory; dead servers' records are set apart).
 */

import assert from "node:assert/strict";
import { type ProcessPlace, SessionRecord } from "../../lib/bus/attendance.ts";
import { sendMail } from "../../lib/bus/mail.ts";
import { ask, publishAnswers } from "../../lib/bus/qa.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { excerpt, forgetSessions, matchSessions, unreadFor } from "../../lib/bus/unread.ts";
import { hookWatchOf } from "../../lib/mcp/profiles/hooks.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const place = (pid: number, parentPid: number, cwd: string): ProcessPlace => ({
  host: "test-host",
  pid,
  parentPid,
  cwd,
});

Deno.test("a student's settled answer, a teacher's queue and peer-bus mail are reported until dealt with", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "onboarding", mode: "reuse" });
  const student = (await SessionRecord.open(bus, {
    profile: "student",
    agent: "stu",
    place: place(101, 100, "/repo"),
  }))!;
  const teacher = (await SessionRecord.open(bus, {
    profile: "teacher",
    agent: "tea",
    place: place(201, 200, "/repo"),
  }))!;
  const peer = (await SessionRecord.open(bus, {
    profile: "peerbus",
    agent: "alice",
    place: place(301, 300, "/other"),
  }))!;
  // Each client's hook finds its own record (its client is the hook's parent).
  const rowOf = async (client: number) =>
    (await matchSessions(
      bus,
      { host: "test-host", cwds: [] },
      () =>
        Promise.resolve({
          ancestors: [client],
          alive: new Map([101, 201, 301].map((pid) => [pid, undefined])),
        }),
    )).mine[0]!;
  const studentRow = await rowOf(100);
  const teacherRow = await rowOf(200);
  const peerRow = await rowOf(300);
  assert.deepEqual(
    [studentRow.session_id, teacherRow.session_id, peerRow.session_id],
    [student.id, teacher.id, peer.id],
  );

  const { state } = await ask(
    bus,
    {
      topicId: topic.topic_id,
      question: "Where is the store?\nAnd why?",
      askedBy: "stu",
      waitSeconds: 0,
    },
    { record: student },
  );
  // Pending: nothing for the student; the teacher has one in the queue.
  assert.deepEqual(unreadFor(bus, [studentRow], hookWatchOf), []);
  const [queue] = unreadFor(bus, [teacherRow], hookWatchOf);
  assert.equal(queue?.kind, "queue");
  assert.equal(queue?.kind === "queue" && queue.first[0]!.text, "Where is the store? / And why?");

  await publishAnswers(bus, {
    topicId: topic.topic_id,
    answeredBy: "tea",
    responses: [{
      question_id: state.question_id,
      answer_markdown: "lib/store",
      repo_pointers: [],
      suggested_followups: [],
    }],
  });
  assert.deepEqual(unreadFor(bus, [teacherRow], hookWatchOf), []);
  const [answer] = unreadFor(bus, [studentRow], hookWatchOf);
  assert.deepEqual(answer && { ...answer }, {
    kind: "answer",
    topicId: topic.topic_id,
    questionId: state.question_id,
    status: "answered",
    by: "tea",
    marker: `a:${state.question_id}`,
  });
  await student.seen(state.question_id, bus.log);
  assert.deepEqual(unreadFor(bus, [studentRow], hookWatchOf), []);

  await sendMail(bus, {
    from: "bob",
    to: "alice",
    content: "hello alice",
    format: "text",
    source: "cli",
  });
  const [mail] = unreadFor(bus, [peerRow], hookWatchOf);
  assert.equal(mail?.kind, "mail");
  assert.deepEqual(mail?.kind === "mail" && mail.first, [{ from: "bob", text: "hello alice" }]);
});

Deno.test("a hook's sessions: the nearest ancestor's, else its working directory's; dead servers' records go", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const a = (await SessionRecord.open(bus, {
    profile: "peer",
    agent: undefined,
    place: place(11, 10, "/a"),
  }))!;
  const a2 = (await SessionRecord.open(bus, {
    profile: "teacher",
    agent: "t",
    place: place(12, 10, "/a"),
  }))!;
  const b = (await SessionRecord.open(bus, {
    profile: "peer",
    agent: undefined,
    place: place(21, 20, "/a"),
  }))!;
  const dead = (await SessionRecord.open(bus, {
    profile: "peer",
    agent: undefined,
    place: place(31, 30, "/c"),
  }))!;
  const ids = (rows: { session_id: string }[]) => rows.map((r) => r.session_id).sort();
  const alive = new Map([11, 12, 21, 10, 20, 1, 41, 51].map((pid) => [pid, undefined]));
  const tree = (ancestors: number[]) => () => Promise.resolve({ ancestors, alive });

  // Two clients in /a: the process tree decides; a client with two servers gets both.
  let found = await matchSessions(bus, { host: "test-host", cwds: ["/a"] }, tree([99, 10, 5, 1]));
  assert.deepEqual(ids(found.mine), [a.id, a2.id].sort());
  found = await matchSessions(bus, { host: "test-host", cwds: ["/a"] }, tree([98, 20, 5, 1]));
  assert.deepEqual(ids(found.mine), [b.id]);
  // The shared grandparent (a terminal, say) is farther than either client: no match through it.
  found = await matchSessions(bus, { host: "test-host", cwds: ["/nowhere"] }, tree([97, 5, 1]));
  assert.deepEqual(found.mine, []);
  assert.deepEqual(ids(found.dead), [dead.id]);
  await forgetSessions(bus, found.dead);
  // One client in a directory: its records, once the tree says its server runs.
  const c = (await SessionRecord.open(bus, {
    profile: "peer",
    agent: undefined,
    place: place(41, 40, "/d"),
  }))!;
  found = await matchSessions(bus, { host: "test-host", cwds: ["/d"] }, tree([40]));
  assert.deepEqual(ids(found.mine), [c.id]);
  // Another host's records are never this hook's.
  found = await matchSessions(bus, { host: "other-host", cwds: ["/d"] }, tree([40]));
  assert.deepEqual(found.mine, []);
  await c.close();
  found = await matchSessions(bus, { host: "test-host", cwds: ["/d"] }, tree([40]));
  assert.deepEqual(found.mine, []);
  // A server that could not read its host name (an entry without --allow-sys) is still found.
  const e = (await SessionRecord.open(bus, {
    profile: "peer",
    agent: undefined,
    place: { ...place(51, 50, "/e"), host: "" },
  }))!;
  found = await matchSessions(bus, { host: "test-host", cwds: ["/e"] }, tree([50]));
  assert.deepEqual(ids(found.mine), [e.id]);
});

Deno.test("a resident bus's own sessions need no process tree: it is read only for a record of another server, or a client that is not the hook's parent", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const since = bus.now();
  const open = (pid: number, client: number, cwd: string) =>
    SessionRecord.open(bus, { profile: "peer", agent: undefined, place: place(pid, client, cwd) });
  const a = (await open(11, 10, "/a"))!;
  const b = (await open(21, 20, "/a"))!;
  const attached = [{ pid: 11, since }, { pid: 21, since }];
  let reads = 0;
  const tree = (ancestors: number[], alive: number[]) => () => {
    reads++;
    return Promise.resolve({ ancestors, alive: new Map(alive.map((pid) => [pid, undefined])) });
  };
  const ids = (rows: { session_id: string }[]) => rows.map((r) => r.session_id).sort();
  const hook = (cwds: string[], parent: number) => ({ host: "test-host", cwds, parent, attached });

  // Both records attached: the parent names its client, no `ps`.
  let found = await matchSessions(bus, hook(["/a"], 10), tree([10], []));
  assert.deepEqual(ids(found.mine), [a.id]);
  assert.deepEqual(found.dead, []);
  assert.equal(reads, 0);
  // A client that ran the hook through a shell: its parent is the shell, so the tree is read.
  found = await matchSessions(bus, hook(["/a"], 99), tree([99, 20, 1], [11, 21]));
  assert.deepEqual(ids(found.mine), [b.id]);
  assert.equal(reads, 1);
  // A record of a server not attached here (a server of its own, or one that died): the tree
  // decides whether it runs, and a dead one goes.
  const other = (await open(31, 30, "/c"))!;
  found = await matchSessions(bus, hook(["/a"], 10), tree([10], []));
  assert.deepEqual(ids(found.mine), [a.id]);
  assert.deepEqual(ids(found.dead), [other.id]);
  assert.equal(reads, 2);
  // A record made before its pid was attached is another process's that had the pid: not known.
  await forgetSessions(bus, found.dead);
  const later = [{ pid: 11, since: bus.now() + 60 }, { pid: 21, since }];
  found = await matchSessions(bus, { ...hook(["/a"], 20), attached: later }, tree([20], [21]));
  assert.deepEqual(ids(found.mine), [b.id]);
  assert.deepEqual(ids(found.dead), [a.id]);
  assert.equal(reads, 3);
});

Deno.test("excerpts are the first two lines, cut, and read only the start of a body", () => {
  assert.equal(excerpt("one\n\n  two  \nthree"), "one / two…");
  assert.equal(excerpt("short"), "short");
  assert.equal(excerpt("x".repeat(500)).length, 161);
  assert.equal(excerpt("\n".repeat(1_000_000) + "a".repeat(1_000_000)), "…");
});
