/**
 * The on-call stop hook never lets a stop through with a message unread:
 * Gemini CLI's `AfterAgent` hook, run as installed (through `sh -c`, by the
 * process that owns the agent's server), hundreds of times across
 * processes, with a message committed at a random point of each run —
 * while the hook starts and matches its session, while it waits, in the
 * last 100 ms before its deadline, just after it, while the server is
 * writing the agent's session rows (joining a topic the message then goes
 * to), and while the client starts another server that records its session
 * and joins a topic. Every message committed before the hook's last look must block the
 * stop; the hook's record (its debug line) says when that look was and why
 * it decided what it did. Once with a server process per agent (the hook
 * reads the database), once with the servers attached to a resident bus
 * (the bus answers the hook).
 */

import assert from "node:assert/strict";
import { postAs } from "../../lib/bus/sync.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { hookShell, spawnHook } from "../_helpers/hook.ts";
import { STANDALONE_RUN, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Lanes run side by side, each its own bus, server and hooks. */
const LANES = 4;
/** Hook runs per lane (with a resident bus, which answers in its own process: fewer). */
const RUNS = 60;
const RUNS_RESIDENT = 30;
/** The on-call wait, in seconds. */
const WAIT = 1;

/** Where a run's message is committed. */
type Point = "start" | "waiting" | "edge" | "after" | "joining" | "restarting";
const POINTS: Point[] = ["start", "waiting", "edge", "after", "joining", "restarting"];

/** The hook's record of one run (its debug line on stderr). */
interface Record {
  by: "hook" | "bus";
  decision: string;
  why: string;
  lastLookAt: string;
  wait?: { deadline: string };
}

function recordOf(stderr: string): Record {
  const line = stderr.split("\n").find((l) => l.startsWith("agent-bus hook: {"));
  assert.ok(line, `the hook recorded its decision:\n${stderr}`);
  return JSON.parse(line.slice("agent-bus hook: ".length));
}

for (const resident of [false, true]) {
  const runs = resident ? RUNS_RESIDENT : RUNS;
  Deno.test({
    name: `the on-call AfterAgent hook sees every message committed before its last look (${
      LANES * runs
    } runs across processes${resident ? ", answered by the resident bus" : ""})${
      STANDALONE_RUN ? " (its servers' mode is its own: the standalone run would repeat it)" : ""
    }`,
    ignore: STANDALONE_RUN,
    // Hundreds of hook processes: minutes on a busy machine.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      await using tmp = await tmpDir();
      const outcomes = await Promise.all(
        Array.from(
          { length: LANES },
          (_, lane) => runLane(`${tmp.path}/lane-${lane}`, lane, runs, resident),
        ),
      );
      const all = outcomes.flat();
      const misses = all.filter((o) => o.miss);
      const judged = all.filter((o) => o.before).length;
      assert.deepEqual(misses.map((m) => m.detail), [], `${misses.length} missed of ${all.length}`);
      // Not vacuous on any machine: every "start" run commits before the hook's last look (a slow
      // start only moves that look later), so at least a sixth of the runs are judged.
      assert.ok(judged >= all.length / POINTS.length, `${judged} of ${all.length} judged`);
      for (const point of POINTS) {
        assert.ok(all.some((o) => o.point === point), `some run committed at "${point}"`);
      }
      const answeredBy = new Set(all.map((o) => o.record.by));
      assert.deepEqual([...answeredBy], [resident ? "bus" : "hook"], "who answered the hooks");
    },
  });
}

async function runLane(dir: string, lane: number, runs: number, resident: boolean) {
  await Deno.mkdir(dir, { recursive: true });
  const db = `${dir}/bus.sqlite`;
  await using peer = await startPeer({ dbPath: db, resident });
  await using bus = openTestBus(db);
  const topic = await peer.ok("topic_create", { name: `on-call-${lane}` }) as { topic_id: string };
  await peer.ok("topic_join", { topic_id: topic.topic_id, agent_name: "gemini" });
  const command = `AGENT_BUS_LOG_LEVEL=debug ${
    hookShell(db, { client: "gemini", event: "AfterAgent", wait: WAIT })
  }`;
  const cwd = Deno.cwd();
  // How long from spawning a hook to its deadline, learned from the runs so far.
  let toDeadline = WAIT * 1000 + 300;
  const outcomes = [];
  for (let run = 0; run < runs; run++) {
    const point = POINTS[run % POINTS.length]!;
    let target = topic.topic_id;
    const spawned = performance.now();
    const hook = spawnHook(command, {
      session_id: `lane-${lane}-run-${run}`,
      cwd,
      hook_event_name: "AfterAgent",
      prompt: "work",
      prompt_response: "done",
      stop_hook_active: false,
    });
    const at = {
      start: Math.random() * 150,
      waiting: 150 + Math.random() * (toDeadline - 300),
      edge: toDeadline - Math.random() * 100,
      after: toDeadline + Math.random() * 100,
      joining: Math.random() * toDeadline,
      restarting: Math.random() * 200,
    }[point];
    // The point in the run is the scenario; the record of the run says what the hook saw.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, at - (performance.now() - spawned)))
    );
    if (point === "joining") {
      // The server writes the session's topic rows as the message comes.
      const joined = await peer.ok("topic_create", { name: `joined-${lane}-${run}` }) as {
        topic_id: string;
      };
      target = joined.topic_id;
      await peer.ok("topic_join", { topic_id: target, agent_name: "gemini" });
    }
    // The client starts another server (as after a restart); it records itself and joins.
    await using another = point === "restarting"
      ? await startPeer({ dbPath: db, resident })
      : undefined;
    if (another) {
      const its = await another.ok("topic_create", { name: `restarted-${lane}-${run}` }) as {
        topic_id: string;
      };
      target = its.topic_id;
      await another.ok("topic_join", { topic_id: target, agent_name: "gemini" });
    }
    await postAs(bus, {
      topicId: target,
      sender: "codex",
      outbox: [{ content_markdown: `answer ${run}` }],
    });
    const committedAt = Date.now();
    const result = await hook;
    assert.equal(result.code, 0, result.stderr);
    const record = recordOf(result.stderr);
    const out = JSON.parse(result.stdout) as { decision?: string };
    assert.equal(
      out.decision === "deny",
      record.decision === "block",
      "the record tells the truth",
    );
    const lookedAt = Date.parse(record.lastLookAt);
    if (record.wait) {
      toDeadline = Date.parse(record.wait.deadline) - (Date.now() - (performance.now() - spawned));
    }
    outcomes.push({
      point,
      record,
      before: committedAt < lookedAt,
      miss: record.decision !== "block" && committedAt < lookedAt,
      detail: `lane ${lane} run ${run} (${point}): committed ${
        lookedAt - committedAt
      } ms before the last look, ${record.decision}: ${record.why}`,
    });
    // Read everything, so the next run starts with nothing unread (another's session ends with it).
    await (another ?? peer).ok("sync", { topic_id: target, wait_seconds: 0 });
  }
  return outcomes;
}
