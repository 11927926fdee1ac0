/**
 * A database URL's password never reaches a log line, an error or a
 * command's output: a run with `postgres://bus:<secret>@…` greps everything
 * the stdio server (started from a terminal, at every log level), the HTTP
 * server, `doctor`, `db` and `install` print. On the PostgreSQL run the URL
 * is the test cluster's own (trust authentication ignores the password), so
 * the servers really start; on SQLite it points at a closed port, so the
 * errors are what gets printed.
 */

import assert from "node:assert/strict";
import { redactSecrets } from "../../lib/strings.ts";
import { redactUrl } from "../../lib/config.ts";
import { cliProcess } from "../_helpers/cli.ts";
import { inheritedEnv, MAIN } from "../_helpers/peer.ts";
import { storeLocation, TEST_STORE } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const SECRET = "Sw0rdfish-9f3a";

Deno.test("redactSecrets() hides URL passwords and password= parameters wherever they appear", () => {
  const cases: [string, string][] = [
    ["postgres://bus:pw@db:5432/bus", "postgres://bus:***@db:5432/bus"],
    ["database postgres://bus:p%40w@db/x. It is", "database postgres://bus:***@db/x. It is"],
    [`{"db":"postgresql://u:${SECRET}@h/d"}`, `{"db":"postgresql://u:***@h/d"}`],
    [
      "postgres://db/bus?user=u&password=pw&sslmode=require",
      "postgres://db/bus?user=u&password=***&sslmode=require",
    ],
    ["host=db password=pw dbname=bus", "host=db password=*** dbname=bus"],
    ["postgres://bus@db/bus", "postgres://bus@db/bus"],
    ["https://example.org/a:b@c", "https://example.org/a:b@c"],
    ["no url here: a@b", "no url here: a@b"],
    ["two a://x:1@h and b://y:2@k", "two a://x:***@h and b://y:***@k"],
  ];
  for (const [input, expected] of cases) assert.equal(redactSecrets(input), expected, input);
  assert.equal(redactUrl(`postgres://bus:${SECRET}@h/b`), "postgres://bus:***@h/b");
});

Deno.test("redactSecrets() is linear on hostile text", () => {
  // 200,000 characters each: a linear scan takes about a millisecond, a quadratic one
  // billions of steps (minutes), so a generous bound tells them apart on any machine.
  const inputs = [
    "://".repeat(70_000),
    `a://${":".repeat(200_000)}`,
    `a://${"@".repeat(200_000)}`,
    "password=".repeat(22_000),
    `x://u:${"p".repeat(200_000)}@h`,
    `${"a://b:c".repeat(30_000)}@`,
  ];
  for (const input of inputs) {
    const started = performance.now();
    redactSecrets(input);
    const took = performance.now() - started;
    assert.ok(took < 500, `${input.slice(0, 12)}…: ${took.toFixed(0)} ms`);
  }
});

/** The test's database URL with a password in it. */
function secretUrl(path: string): string {
  if (TEST_STORE === "postgres") {
    const url = new URL(storeLocation(path));
    url.password = SECRET;
    return url.toString();
  }
  return `postgres://bus:${SECRET}@127.0.0.1:9/bus?connect_timeout=1`;
}

Deno.test("no output of any command shows the database password", async () => {
  await using tmp = await tmpDir();
  const db = secretUrl(`${tmp.path}/bus.sqlite`);
  const home = `${tmp.path}/home`;
  await Deno.mkdir(home);
  const env = { AGENT_BUS_DB: db, AGENT_BUS_LOG_LEVEL: "debug", HOME: home };
  const outputs: [string, string][] = [];
  const keep = (what: string, result: { stdout: string; stderr: string }) =>
    outputs.push([what, `${result.stdout}\n${result.stderr}`]);

  // The stdio server started by hand from a terminal (`script` gives it one), and the HTTP
  // server: each runs until it says it is ready (or fails to start), then is stopped.
  const deno = `${Deno.execPath()} run --quiet --allow-all ${MAIN}`;
  keep("stdio server", await runUntil("script", ["-qfec", deno, "/dev/null"], env));
  keep(
    "http server",
    await runUntil(
      Deno.execPath(),
      ["run", "--quiet", "--allow-all", MAIN, "http", "--port", "0"],
      env,
    ),
  );
  for (
    const args of [
      ["doctor"],
      ["db", "stats"],
      ["db", "migrate", "--dry-run"],
      ["topics", "list"],
      ["install", "claude-code", "--dry-run"],
      ["install", "codex", "--dry-run"],
    ]
  ) {
    keep(args.join(" "), await cliProcess(args, env, { cwd: tmp.path }));
  }
  for (const [what, text] of outputs) {
    assert.ok(!text.includes(SECRET), `${what} printed the password:\n${text}`);
  }
  // The runs did say something about the database (so the grep looked at real output).
  const all = outputs.map(([, text]) => text).join("\n");
  assert.match(all, /postgres(ql)?:\/\/bus:\*\*\*@/);
});

/**
 * Run a program until its output (stdout and stderr together) shows it is ready or failed,
 * or until it exits; then stop it and return all it printed.
 */
async function runUntil(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string }> {
  const child = new Deno.Command(command, {
    args,
    env: { ...inheritedEnv(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const done = /server ready|Ctrl-C|error|Cannot|DB_UNAVAILABLE/;
  const { promise: seen, resolve } = Promise.withResolvers<void>();
  const pump = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      if (done.test(text)) resolve();
    }
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]);
  // Ready, failed, exited, or (a bound, not a sync point) silent for 30 s: then it is stopped.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => timer = setTimeout(resolve, 30_000));
  await Promise.race([seen, child.status, bound]);
  clearTimeout(timer);
  try {
    // SIGKILL: `script` would not pass a gentler signal on; its pty's closing ends the server.
    child.kill("SIGKILL");
  } catch {
    // it had already exited
  }
  await child.status;
  await pumped;
  return { stdout: text, stderr: "" };
}
