/// <reference lib="dom" />
/**
 * The web console in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), against a real `agent-bus http` process and agents in
 * other processes talking MCP. Screenshots go to a temp dir, or to
 * `AGENT_BUS_SCREENSHOTS` (e.g. `docs/screenshots`) when set.
 */

import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { connectAgent, post } from "../_helpers/chat.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { HOSTILE_HTML, HOSTILE_SVG } from "../_helpers/hostile_files.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
const SKIP = hasChromium
  ? ""
  : " (SKIPPED: /usr/bin/chromium is not installed; apt-get install chromium)";

async function launch(): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

/** A page that fails the test on any script error. */
async function openPage(browser: Browser, url: string, colorScheme: "light" | "dark" = "light") {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 }, colorScheme });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("dialog", (dialog) => {
    errors.push(`dialog: ${dialog.message()}`);
    dialog.dismiss();
  });
  await page.goto(url);
  await page.locator("#live.ok").waitFor();
  return { page, errors };
}

async function screenshot(page: Page, name: string) {
  const dir = Deno.env.get("AGENT_BUS_SCREENSHOTS") ?? await Deno.makeTempDir();
  await Deno.mkdir(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${name}.png` });
}

/** An HTTP server (no embedding endpoint) and one agent that joined `topic` as `name`. */
async function stageWith(topic: string, name: string) {
  const dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  const server = await startHttpServer({
    dbPath,
    env: { AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" },
  });
  const agent = await startPeer({ dbPath });
  const topicId = (await agent.ok("topic_create", { name: topic })).topic_id as string;
  await agent.ok("topic_join", { agent_name: name, topic_id: topicId });
  return {
    server,
    agent,
    topicId,
    async [Symbol.asyncDispose]() {
      await agent.close();
      await server[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function say(agent: Peer, topicId: string, content: string, extra: object = {}) {
  const result = await agent.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: content, ...extra }],
    wait_seconds: 0,
  }) as { sent: { message: { message_id: string; seq: number } }[] };
  return result.sent[0]!.message;
}

Deno.test({
  name: `the console shows agents' messages live and posts into a waiting sync${SKIP}`,
  ignore: !hasChromium,
  async fn() {
    await using dir = await tmpDir();
    const dbPath = `${dir.path}/bus.sqlite`;
    await using server = await startHttpServer({ dbPath });
    await using codex = await startPeer({ dbPath });
    await using claude = await startPeer({ dbPath });
    const topicId = (await codex.ok("topic_create", { name: "release-1.4" })).topic_id as string;
    await codex.ok("topic_join", { agent_name: "codex", topic_id: topicId });
    await claude.ok("topic_join", { agent_name: "claude", topic_id: topicId });
    const plan = await say(
      codex,
      topicId,
      "## Plan\n\nMigration `0042` renames `users.name`:\n\n```sql\nALTER TABLE users RENAME COLUMN name TO full_name;\n```\n\n```mermaid\ngraph LR\n  deploy --> migrate --> verify\n```",
    );
    const question = await say(claude, topicId, "Is the ORM ready for `full_name`?", {
      message_type: "question",
    });

    await using browser = await launch();
    const { page, errors } = await openPage(browser, `${server.url}/`);
    await page.locator(".topic-link", { hasText: "release-1.4" }).click();
    await page.locator("#m-2").waitFor();
    assert.equal(await page.locator("#topic-title").textContent(), "release-1.4");
    // Markdown rendered: a heading, highlighted SQL, a drawn diagram.
    assert.equal(await page.locator("#m-1 .body h2").textContent(), "Plan");
    await page.locator("#m-1 code.hljs .hljs-keyword").first().waitFor();
    await page.locator("#m-1 .diagram svg").waitFor();
    assert.match(await page.locator("#m-1 .diagram svg").textContent() ?? "", /migrate/);

    // A message sent by an agent process appears without a reload, in order.
    const reply = await say(codex, topicId, "Yes: the ORM maps **full_name** already.", {
      message_type: "answer",
      reply_to: question.message_id,
    });
    await page.locator(`#m-${reply.seq}`).waitFor({ timeout: 5000 });
    assert.match(await page.locator(`#m-${reply.seq} .body`).textContent() ?? "", /full_name/);
    const seqs = await page.locator("#messages > li").evaluateAll((items) =>
      items.map((li) => li.id)
    );
    assert.deepEqual(seqs, ["m-1", "m-2", "m-3"]);
    assert.match(await page.locator("#m-3 .reply-link").textContent() ?? "", /#2 claude/);

    // Presence chips: both agents present; claude, all read, waits in sync for the operator.
    await claude.ok("sync", { topic_id: topicId, wait_seconds: 0 });
    const waiting = claude.ok("sync", { topic_id: topicId, wait_seconds: 30 }) as Promise<{
      received: { sender: string; content_markdown: string; reply_to: string | null }[];
    }>;
    await page.locator(".chip.waiting", { hasText: "claude" }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator(".chip", { hasText: "codex" }).count(), 1);

    // The operator replies to the plan from the page (keyboard: k to it, r to reply);
    // claude's waiting sync gets it.
    await page.locator("#m-3").focus();
    await page.keyboard.press("k");
    await page.keyboard.press("k");
    await page.waitForFunction(() => document.activeElement?.id === "m-1");
    await page.keyboard.press("r");
    assert.match(await page.locator("#replying").textContent() ?? "", /#1 codex/);
    await page.locator("#composer-text").fill("Ship it after CI is green.");
    await page.locator("#composer-text").press("Control+Enter");
    const received = (await waiting).received;
    assert.deepEqual(
      received.map((m) => [m.sender, m.content_markdown, m.reply_to]),
      [["operator", "Ship it after CI is green.", plan.message_id]],
    );
    await page.locator("#m-4 .reply-link", { hasText: "#1 codex" }).waitFor();
    await page.locator(".chip.waiting").waitFor({ state: "detached", timeout: 5000 });
    await page.locator("#m-2").scrollIntoViewIfNeeded();
    await screenshot(page, "thread");
    const dark = await openPage(browser, `${server.url}/#/topic/${topicId}`, "dark");
    await dark.page.locator("#m-1 .diagram svg").waitFor();
    await screenshot(dark.page, "thread-dark");
    assert.deepEqual(dark.errors, []);
    assert.deepEqual(errors, []);
  },
});

Deno.test({
  name: `console search finds a message and opens it in its thread${SKIP}`,
  ignore: !hasChromium,
  async fn() {
    await using stage = await stageWith("search-me", "gemini");
    const { server, agent, topicId } = stage;
    let flaky = "";
    for (let i = 1; i <= 140; i++) {
      const sent = await say(
        agent,
        topicId,
        i === 7 ? "The flaky test is in tests/store/wal_checkpoint_test.ts" : `filler ${i}`,
      );
      if (i === 7) flaky = sent.message_id;
    }
    await say(agent, topicId, "Fixed the one above.", { reply_to: flaky });

    const old = (await agent.ok("topic_create", { name: "old-news" })).topic_id as string;
    await agent.ok("topic_close", { topic_id: old });

    await using browser = await launch();
    const { page, errors } = await openPage(browser, `${server.url}/`);
    // The list: unread counts, and closed topics only under "all" or "closed".
    const listed = page.locator(".topic-link", { hasText: "search-me" });
    assert.equal(await listed.locator(".unread").textContent(), "141");
    assert.equal(await page.locator(".topic-link", { hasText: "old-news" }).count(), 0);
    await page.locator("#topic-status").selectOption("all");
    await page.locator(".topic-link", { hasText: "old-news" }).waitFor();
    await page.locator("#topic-filter").fill("news");
    assert.equal(await listed.count(), 0);
    await page.locator("#topic-filter").fill("");
    await page.locator("#thread").focus();
    await page.keyboard.press("/");
    await page.keyboard.type("wal checkpoint");
    await page.keyboard.press("Enter");
    const result = page.locator("#search-results .result").first();
    await result.waitFor();
    assert.match(await result.locator("mark").first().textContent() ?? "", /wal|checkpoint/i);
    await screenshot(page, "search");
    await result.click();
    // Message 7 is older than the first page: the thread loads back to it and focuses it.
    const target = page.locator("#m-7");
    await target.waitFor();
    assert.match(await target.textContent() ?? "", /wal_checkpoint_test/);
    await page.waitForFunction(() => document.activeElement?.id === "m-7");
    assert.equal(await listed.locator(".unread").count(), 0, "opening a topic marks it read");
    assert.deepEqual(errors, []);

    // A reply to a message older than the loaded page links to it all the same.
    const fresh = await openPage(browser, `${server.url}/#/topic/${topicId}`);
    await fresh.page.locator("#m-141 .reply-link").click();
    await fresh.page.waitForFunction(() => document.activeElement?.id === "m-7");
    assert.match(await fresh.page.locator("#m-141 .reply-link").textContent() ?? "", /earlier/);
    assert.deepEqual(fresh.errors, []);
  },
});

Deno.test({
  name: `message bodies and names with <script> and <img onerror> render inert${SKIP}`,
  ignore: !hasChromium,
  async fn() {
    await using stage = await stageWith(
      "<img src=x onerror=alert(1)>",
      "<b onmouseover=alert(2)>eve</b>",
    );
    const { server, agent, topicId } = stage;
    const hostile = [
      "<script>window.__pwned = 'script'</script>",
      "<img src=x onerror=\"window.__pwned = 'img'\">",
      "[click](javascript:window.__pwned='link')",
      '<svg><a xlink:href="javascript:alert(3)"><text>x</text></a></svg>',
      '<iframe src="javascript:alert(4)"></iframe>',
      "```mermaid\ngraph TD\n  A[\"<img src=x onerror=window.__pwned='mermaid'>\"] --> B\n```",
    ].join("\n\n");
    await say(agent, topicId, hostile);
    await say(agent, topicId, "the word pwned «here»");

    await using browser = await launch();
    const { page, errors } = await openPage(browser, `${server.url}/#/topic/${topicId}`);
    await page.locator("#m-1 .diagram").waitFor();
    await page.locator("#m-2").waitFor();
    // Let any handler that survived get its chance to run.
    await page.locator("#m-1 .body").hover();
    await page.locator("#m-1 .sender").hover();
    const state = await page.evaluate(() => ({
      pwned: (globalThis as { __pwned?: string }).__pwned ?? null,
      scripts: document.querySelectorAll("#messages script, #topic-list script").length,
      handlers: [...document.querySelectorAll("#messages *, #topic-list *, #topic-title *")]
        .filter((el) => [...el.attributes].some((a) => a.name.startsWith("on"))).length,
      jsLinks: [...document.querySelectorAll("#messages a")]
        .filter((a) => /^\s*javascript:/i.test(a.getAttribute("href") ?? "")).length,
      iframes: document.querySelectorAll("#messages iframe").length,
      title: document.querySelector("#topic-title")?.textContent,
      sender: document.querySelector("#m-1 .sender")?.textContent,
    }));
    assert.deepEqual(state, {
      pwned: null,
      scripts: 0,
      handlers: 0,
      jsLinks: 0,
      iframes: 0,
      title: "<img src=x onerror=alert(1)>",
      sender: "<b onmouseover=alert(2)>eve</b>",
    });

    // Search snippets are text with <mark>s, never markup from the message.
    await page.locator("#search-input").fill("pwned");
    await page.keyboard.press("Enter");
    await page.locator("#search-results .result").first().waitFor();
    const snippetHtml = await page.locator("#search-results").innerHTML();
    assert.doesNotMatch(snippetHtml, /<img|<script/);
    // (The API sends snippets HTML-escaped; the page shows the message's characters as written.)
    assert.match(await page.locator("#search-results").textContent() ?? "", /<(script|img)\b/);
    assert.doesNotMatch(await page.locator("#search-results").textContent() ?? "", /&lt;/);
    assert.equal(
      await page.evaluate(() => (globalThis as { __pwned?: string }).__pwned ?? null),
      null,
    );
    assert.deepEqual(errors, []);
  },
});

Deno.test({
  name: `the console shows chatbus badges, images and reactions, and sets a thread's state${SKIP}`,
  ignore: !hasChromium,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    await using server = await startHttpServer({
      dbPath,
      env: { AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" },
    });
    await using chat = await startPeer({ dbPath, args: ["--profile", "chatbus"] });
    const alice = await connectAgent(chat, "design review");
    // A 1×1 red PNG.
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    const first = await post(alice, "Here is the diagram", {
      priority: "urgent",
      metadata: {
        handoff_target: "bob",
        attachments: [{ type: "image", mimeType: "image/png", data: png }],
      },
    });
    await chat.ok("msg_react", { message_id: first.msg_id, reaction: "👍" });
    await chat.ok("msg_edit", { message_id: first.msg_id, new_content: "Here is the new diagram" });
    await post(alice, "Done for today", { metadata: { stop_reason: "complete" } });

    await using browser = await launch();
    const { page, errors } = await openPage(browser, `${server.url}/#/topic/${alice.threadId}`);
    await page.locator("#m-2").waitFor();
    const shown = await page.evaluate(() => ({
      badges: [...document.querySelectorAll("#m-1 .badge")].map((b) => b.textContent),
      body: document.querySelector("#m-1 .body")?.textContent?.trim(),
      reactions: [...document.querySelectorAll("#m-1 .reaction")].map((r) => r.textContent),
      stop: document.querySelector("#m-2 .badge.stop")?.textContent,
    }));
    assert.deepEqual(shown, {
      badges: ["urgent", "→ bob", "edited"],
      body: "Here is the new diagram",
      reactions: ["👍"],
      stop: "■ complete",
    });
    const image = page.locator("#m-1 img.attachment");
    await image.waitFor();
    await page.waitForFunction(() =>
      (document.querySelector("#m-1 img.attachment") as HTMLImageElement | null)?.naturalWidth === 1
    );
    await screenshot(page, "console-chatbus");

    // Typing shows beside the agent's presence, live, and a post ends it.
    await chat.ok("agent_set_typing", {
      thread_id: alice.threadId,
      agent_id: alice.agentId,
      is_typing: true,
    });
    await page.locator("#presence .chip.typing").waitFor();
    assert.equal(await page.locator("#presence .chip.typing .chip-state").textContent(), "typing…");
    await post(alice, "Posted; no longer typing");
    await page.locator("#presence .chip.typing").waitFor({ state: "detached" });

    await page.selectOption("#thread-state", "review");
    await page.waitForFunction(() =>
      document.querySelector("#topic-meta")?.textContent?.includes("review")
    );
    assert.equal((await chat.ok("thread_get", { thread_id: alice.threadId })).status, "review");
    assert.deepEqual(errors, []);
  },
});

Deno.test({
  name:
    `an SVG or HTML attachment never runs in the console's origin, opened or navigated to${SKIP}`,
  ignore: !hasChromium,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    await using server = await startHttpServer({
      dbPath,
      env: { AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" },
    });
    await using chat = await startPeer({ dbPath, args: ["--profile", "chatbus"] });
    const alice = await connectAgent(chat, "hostile files");
    const posted = await post(alice, "open these", {
      metadata: {
        attachments: [
          { type: "image", mimeType: "image/svg+xml", data: btoa(HOSTILE_SVG) },
          { type: "file", mimeType: "text/html", data: btoa(HOSTILE_HTML), name: "page.html" },
        ],
      },
    });
    const urls = [0, 1].map((n) => `${server.url}/api/messages/${posted.msg_id}/attachments/${n}`);

    await using browser = await launch();
    // The console lists them as downloads, not as pictures or frames.
    const { page, errors } = await openPage(browser, `${server.url}/#/topic/${alice.threadId}`);
    await page.locator("#m-1 a.attachment.file").nth(1).waitFor();
    assert.equal(await page.locator("#m-1 img.attachment").count(), 0);
    assert.deepEqual(errors, []);

    // Opened directly in the console's origin (a click on the link, a typed URL) ...
    for (const url of urls) {
      const tab = await browser.newPage();
      const download = tab.waitForEvent("download");
      await tab.goto(url).catch(() => {}); // a download aborts the navigation
      await (await download).cancel();
      assert.notEqual(await tab.title(), "ran");
      await tab.close();
    }
    // ... or reached from a page of another origin that merely navigates there.
    for (const url of urls) {
      const tab = await browser.newPage();
      await tab.setContent(`<a id="go" href="${url}">go</a>`);
      const download = tab.waitForEvent("download");
      await tab.click("#go");
      await (await download).cancel();
      assert.notEqual(await tab.title(), "ran");
      await tab.close();
    }
    const topics = await (await fetch(`${server.url}/api/topics`)).json() as {
      topics: { name: string }[];
    };
    assert.deepEqual(topics.topics.filter((t) => t.name.startsWith("pwned")), []);
  },
});
