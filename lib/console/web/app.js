// @ts-nocheck: browser code, served as is (checked by the browser tests)
// The agent-bus web console: topic list, live thread, composer and search
// over the REST API, kept current by the /api/events stream (no polling).
// Every name, snippet and body reaches the page as text or through the
// sanitising Markdown renderer, never as raw HTML.

import { renderMarkdown } from "./markdown.js";

const $ = (id) => document.getElementById(id);
const PAGE = 100;

const state = {
  topics: new Map(), // topic_id -> summary
  presence: new Map(), // topic_id -> agents
  current: null, // open topic id
  messages: new Map(), // message_id -> message (open topic)
  firstSeq: null,
  lastSeq: 0,
  replyTo: null,
  read: JSON.parse(localStorage.getItem("agent-bus:read") ?? "{}"),
};

// ---------- API ----------

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: options.body ? { "content-type": "application/json" } : {},
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : response.statusText);
  }
  return body;
}

const post = (path, body) => api(path, { method: "POST", body: JSON.stringify(body) });

// ---------- small helpers ----------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

function senderTag(name) {
  const tag = el("span", { class: "sender", text: name });
  tag.style.setProperty("--hue", String(hue(name)));
  return tag;
}

function ago(seconds) {
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(seconds * 1000).toLocaleDateString();
}

const time = (seconds) =>
  el("time", {
    datetime: new Date(seconds * 1000).toISOString(),
    title: new Date(seconds * 1000).toLocaleString(),
    text: new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }),
  });

const HTML_ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };

/** A snippet (HTML-escaped text, as /api/search sends it) with «hits» as <mark>s, built from text nodes only. */
function snippet(escaped) {
  const text = escaped.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => HTML_ENTITIES[entity]);
  const node = el("p", { class: "snippet" });
  text.split(/(«[^»]*»)/).forEach((part) => {
    if (part.startsWith("«") && part.endsWith("»")) {
      node.append(el("mark", { text: part.slice(1, -1) }));
    } else if (part) node.append(document.createTextNode(part));
  });
  return node;
}

function markRead(topicId, seq) {
  if ((state.read[topicId] ?? 0) >= seq) return;
  state.read[topicId] = seq;
  localStorage.setItem("agent-bus:read", JSON.stringify(state.read));
}

function setLive(text, ok) {
  $("live").textContent = text;
  $("live").classList.toggle("ok", ok);
}

// ---------- topic list ----------

async function loadTopics() {
  const [{ topics }, presence] = await Promise.all([
    api("/api/topics?status=all&sort=activity&limit=1000"),
    api("/api/presence"),
  ]);
  state.topics = new Map(topics.map((t) => [t.topic_id, t]));
  state.presence = new Map(Object.entries(presence.topics));
  renderTopics();
}

function renderTopics() {
  const status = $("topic-status").value;
  const filter = $("topic-filter").value.trim().toLowerCase();
  const topics = [...state.topics.values()]
    .filter((t) => status === "all" || t.status === status)
    .filter((t) => !filter || t.name.toLowerCase().includes(filter))
    .sort((a, b) => activity(b) - activity(a));
  const items = topics.map((t) => {
    const unread = t.topic_id === state.current
      ? 0
      : Math.max(0, t.last_seq - (state.read[t.topic_id] ?? 0));
    const present = (state.presence.get(t.topic_id) ?? []).length;
    const link = el(
      "a",
      { href: `#/topic/${encodeURIComponent(t.topic_id)}`, class: "topic-link" },
      el("span", { class: "topic-name", text: t.name }),
      unread
        ? el("span", { class: "unread", text: String(unread), "aria-label": `${unread} unread` })
        : null,
      el(
        "span",
        { class: "topic-sub" },
        `${t.messages} msg · ${ago(activity(t))}`,
        present ? ` · ${present} here` : "",
        t.status === "closed" ? " · closed" : "",
      ),
    );
    if (t.topic_id === state.current) link.setAttribute("aria-current", "page");
    return el("li", { class: t.status }, link);
  });
  $("topic-list").replaceChildren(
    ...(items.length ? items : [el("li", { class: "empty", text: "No topics" })]),
  );
}

const activity = (t) => Math.max(t.last_message_at ?? 0, t.created_at, t.closed_at ?? 0);

// ---------- thread ----------

async function openTopic(topicId, focusSeq) {
  show("topic-view");
  if (state.current !== topicId) {
    state.current = topicId;
    state.messages.clear();
    state.replyTo = null;
    $("messages").replaceChildren();
    const view = await api(`/api/topics/${encodeURIComponent(topicId)}?messages=${PAGE}`);
    if (state.current !== topicId) return;
    state.topics.set(topicId, view.topic);
    state.presence.set(topicId, view.presence);
    state.firstSeq = view.messages[0]?.seq ?? null;
    state.lastSeq = view.topic.last_seq;
    view.messages.forEach((m) => appendMessage(m));
    $("older").hidden = !view.has_more;
    renderTopicHead();
    renderReply();
  }
  if (focusSeq !== undefined) await focusMessage(focusSeq);
  else $("messages").lastElementChild?.scrollIntoView({ block: "end" });
  markRead(topicId, state.lastSeq);
  renderTopics();
}

function renderTopicHead() {
  const t = state.topics.get(state.current);
  if (!t) return;
  $("topic-title").textContent = t.name;
  const threadState = t.status === "closed" ? "closed" : t.thread_state ?? "discuss";
  $("topic-meta").textContent = `${t.topic_id} · ${t.status}${
    t.close_reason ? ` (${t.close_reason})` : ""
  } · ${threadState} · ${t.messages} messages`;
  $("thread-state").value = t.status === "closed" ? "" : threadState;
  const base = `/api/topics/${encodeURIComponent(t.topic_id)}/export`;
  $("export-md").href = `${base}?format=markdown`;
  $("export-json").href = `${base}?format=json`;
  $("close-topic").hidden = t.status === "closed";
  $("composer").hidden = t.status === "closed";
  renderPresence();
}

function renderPresence() {
  const agents = state.presence.get(state.current) ?? [];
  const chips = agents.map((a) => {
    const chip = el(
      "li",
      {
        class: a.typing ? "chip typing" : a.waiting ? "chip waiting" : "chip",
        title: `last read #${a.last_seq}, ${ago(a.updated_at)}`,
      },
      senderTag(a.agent_name),
      el("span", {
        class: "chip-state",
        text: a.typing ? "typing…" : a.waiting ? "waiting" : ago(a.updated_at),
      }),
    );
    return chip;
  });
  $("presence").replaceChildren(
    ...(chips.length
      ? chips
      : [el("li", { class: "chip empty", text: "Nobody here in the last 5 minutes" })]),
  );
}

/** Badges of a chatbus message: priority, handoff, stop reason, edits. */
function chatBadges(m) {
  const badges = [];
  const meta = m.metadata ?? {};
  if (m.chat?.priority && m.chat.priority !== "normal") {
    badges.push(el("span", { class: `badge priority-${m.chat.priority}`, text: m.chat.priority }));
  }
  if (typeof meta.handoff_target === "string") {
    badges.push(el("span", { class: "badge handoff", text: `→ ${meta.handoff_target}` }));
  }
  if (typeof meta.stop_reason === "string") {
    badges.push(el("span", { class: "badge stop", text: `■ ${meta.stop_reason}` }));
  }
  if (m.chat?.edit_version > 0) {
    badges.push(el("span", {
      class: "badge edited",
      title: `edited ${m.chat.edit_version} time(s)`,
      text: "edited",
    }));
  }
  return badges;
}

/** Types the server shows inline; anything else (SVG included) it serves as a download. */
const RASTER = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
]);

/** Attachments (raster images shown, other files as download links) and reactions under a chatbus message. */
function chatFooter(m) {
  if (!m.chat) return null;
  const images = m.chat.attachments.map((mime, n) => {
    const src = `/api/messages/${encodeURIComponent(m.message_id)}/attachments/${n}`;
    return RASTER.has(mime)
      ? el("img", {
        class: "attachment",
        alt: `attachment ${n + 1} (${mime})`,
        loading: "lazy",
        src,
      })
      : el("a", {
        class: "attachment file",
        href: src,
        download: "",
        text: `attachment ${n + 1} (${mime})`,
      });
  });
  const counts = new Map();
  for (const r of m.chat.reactions) counts.set(r.reaction, (counts.get(r.reaction) ?? 0) + 1);
  const reactions = [...counts].map(([reaction, n]) =>
    el("span", { class: "reaction", text: n > 1 ? `${reaction} ${n}` : reaction })
  );
  if (images.length === 0 && reactions.length === 0) return null;
  return el(
    "div",
    { class: "chat-footer" },
    images.length ? el("div", { class: "attachments" }, ...images) : null,
    reactions.length ? el("div", { class: "reactions" }, ...reactions) : null,
  );
}

function messageNode(m) {
  const replied = m.reply_to ? state.messages.get(m.reply_to) : undefined;
  const body = el("div", { class: "body" });
  renderMarkdown(m.content_markdown, body);
  return el(
    "li",
    {
      id: `m-${m.seq}`,
      class: `message type-${m.message_type.replace(/[^\w-]/g, "")}`,
      "data-id": m.message_id,
      tabindex: "-1",
    },
    el(
      "div",
      { class: "message-head" },
      el("a", {
        class: "seq",
        href: `#/topic/${encodeURIComponent(m.topic_id)}/m/${m.seq}`,
        text: `#${m.seq}`,
      }),
      senderTag(m.sender),
      m.message_type !== "message" ? el("span", { class: "type", text: m.message_type }) : null,
      ...chatBadges(m),
      time(m.created_at),
      m.reply_to
        ? el("a", {
          class: "reply-link",
          href: replied ? `#/topic/${encodeURIComponent(m.topic_id)}/m/${replied.seq}` : "#",
          "data-reply": m.reply_to,
          text: replied
            ? `↩ reply to #${replied.seq} ${replied.sender}`
            : "↩ reply to an earlier message",
        })
        : null,
      el("button", { type: "button", class: "reply", onclick: () => startReply(m), text: "Reply" }),
    ),
    body,
    chatFooter(m),
  );
}

function appendMessage(m) {
  if (state.messages.has(m.message_id)) return;
  state.messages.set(m.message_id, m);
  state.lastSeq = Math.max(state.lastSeq, m.seq);
  $("messages").append(messageNode(m));
}

async function loadOlder() {
  if (state.firstSeq === null) return;
  const topicId = state.current;
  const page = await api(
    `/api/topics/${
      encodeURIComponent(topicId)
    }/messages?before_seq=${state.firstSeq}&limit=${PAGE}`,
  );
  if (state.current !== topicId) return;
  const first = $("messages").firstElementChild;
  for (const m of page.messages) {
    if (state.messages.has(m.message_id)) continue;
    state.messages.set(m.message_id, m);
    $("messages").insertBefore(messageNode(m), first);
  }
  state.firstSeq = page.messages[0]?.seq ?? state.firstSeq;
  $("older").hidden = !page.has_more;
}

async function focusMessage(seq) {
  while (!$(`m-${seq}`) && state.firstSeq !== null && seq < state.firstSeq && !$("older").hidden) {
    await loadOlder();
  }
  const node = $(`m-${seq}`);
  if (!node) return;
  node.scrollIntoView({ block: "center" });
  node.classList.add("focused");
  node.focus({ preventScroll: true });
  setTimeout(() => node.classList.remove("focused"), 2500);
}

async function catchUp(topicId) {
  // Fetch whatever arrived after the last shown message (after a gap or a reset).
  for (;;) {
    const page = await api(
      `/api/topics/${
        encodeURIComponent(topicId)
      }/messages?after_seq=${state.lastSeq}&limit=${PAGE}`,
    );
    if (state.current !== topicId) return;
    page.messages.forEach(appendMessage);
    if (!page.has_more) return;
  }
}

// ---------- composer ----------

function startReply(m) {
  state.replyTo = m;
  if (m.message_type === "question") $("composer-type").value = "answer";
  renderReply();
  $("composer-text").focus();
}

function renderReply() {
  const m = state.replyTo;
  $("replying").hidden = !m;
  if (m) {
    $("replying-link").textContent = `#${m.seq} ${m.sender}`;
    $("replying-link").href = `#/topic/${encodeURIComponent(m.topic_id)}/m/${m.seq}`;
  }
}

async function send(event) {
  event.preventDefault();
  const text = $("composer-text").value;
  if (!text.trim() || !state.current) return;
  const name = $("composer-name").value.trim() || "operator";
  localStorage.setItem("agent-bus:name", name);
  $("composer-status").textContent = "Sending…";
  try {
    const { message } = await post(`/api/topics/${encodeURIComponent(state.current)}/messages`, {
      content_markdown: text,
      sender: name,
      message_type: $("composer-type").value,
      reply_to: state.replyTo?.message_id,
      client_message_id: crypto.randomUUID(),
    });
    appendMessage(message);
    markRead(state.current, state.lastSeq);
    $("composer-text").value = "";
    $("composer-type").value = "message";
    state.replyTo = null;
    renderReply();
    $("composer-status").textContent = `Sent #${message.seq}`;
    $(`m-${message.seq}`)?.scrollIntoView({ block: "end" });
  } catch (error) {
    $("composer-status").textContent = error.message;
  }
}

// ---------- search ----------

async function runSearch(q, mode) {
  show("search-view");
  state.current = null;
  renderTopics();
  $("search-title").textContent = `Search: ${q}`;
  $("search-note").textContent = "Searching…";
  $("search-results").replaceChildren();
  try {
    const result = await api(
      `/api/search?q=${encodeURIComponent(q)}&mode=${encodeURIComponent(mode)}&limit=50`,
    );
    const notes = result.warnings.map((w) => w.message ?? w.code);
    $("search-note").textContent = [`${result.results.length} result(s)`, ...notes].join(" · ");
    $("search-results").replaceChildren(...result.results.map((hit) =>
      el(
        "li",
        {},
        el(
          "a",
          { href: `#/topic/${encodeURIComponent(hit.topic_id)}/m/${hit.seq}`, class: "result" },
          el(
            "span",
            { class: "result-head" },
            el("strong", { text: hit.topic_name ?? hit.topic_id }),
            ` #${hit.seq} `,
            senderTag(hit.sender),
            " ",
            time(hit.created_at),
          ),
          snippet(hit.snippet),
        ),
      )
    ));
  } catch (error) {
    $("search-note").textContent = error.message;
  }
}

// ---------- live events ----------

function connect() {
  const events = new EventSource("/api/events");
  events.addEventListener("ready", () => setLive("live", true));
  events.onerror = () => setLive("reconnecting…", false);
  events.addEventListener("message", (event) => {
    const { message } = JSON.parse(event.data);
    const topic = state.topics.get(message.topic_id);
    if (topic) {
      topic.last_seq = Math.max(topic.last_seq, message.seq);
      topic.messages += state.messages.has(message.message_id) ? 0 : 1;
      topic.last_message_at = message.created_at;
    }
    if (message.topic_id === state.current) {
      if (message.seq > state.lastSeq + 1) {
        catchUp(state.current);
      } else {
        const atBottom = innerHeight + scrollY >= document.body.scrollHeight - 80;
        appendMessage(message);
        if (atBottom) $(`m-${message.seq}`)?.scrollIntoView({ block: "end" });
      }
      if (document.visibilityState === "visible") markRead(message.topic_id, message.seq);
    }
    renderTopics();
  });
  events.addEventListener("topic", (event) => {
    const topic = JSON.parse(event.data);
    if (topic.deleted) state.topics.delete(topic.topic_id);
    else state.topics.set(topic.topic_id, topic);
    renderTopics();
    if (topic.topic_id === state.current) renderTopicHead();
  });
  events.addEventListener("presence", (event) => {
    const { topic_id, agents } = JSON.parse(event.data);
    state.presence.set(topic_id, agents);
    renderTopics();
    if (topic_id === state.current) renderPresence();
  });
  events.addEventListener("reset", () => {
    loadTopics();
    if (state.current) catchUp(state.current);
  });
}

// ---------- routing and wiring ----------

function show(id) {
  for (const view of ["welcome", "topic-view", "search-view"]) $(view).hidden = view !== id;
}

async function route() {
  const hash = decodeURIComponent(location.hash.slice(1));
  const topic = /^\/topic\/([^/]+)(?:\/m\/(\d+))?$/.exec(hash);
  const search = /^\/search\/(\w+)\/(.+)$/.exec(hash);
  if (topic) await openTopic(topic[1], topic[2] ? Number(topic[2]) : undefined);
  else if (search) await runSearch(search[2], search[1]);
  else {
    state.current = null;
    show("welcome");
    renderTopics();
  }
}

async function main() {
  $("composer-name").value = localStorage.getItem("agent-bus:name") ?? "operator";
  $("composer").addEventListener("submit", send);
  $("composer-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("composer").requestSubmit();
  });
  $("replying-cancel").addEventListener("click", () => {
    state.replyTo = null;
    renderReply();
  });
  $("older").addEventListener("click", loadOlder);
  $("topic-filter").addEventListener("input", renderTopics);
  $("topic-status").addEventListener("change", renderTopics);
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const q = $("search-input").value.trim();
    if (q) location.hash = `/search/${$("search-mode").value}/${encodeURIComponent(q)}`;
  });
  $("new-topic").addEventListener("submit", async (event) => {
    event.preventDefault();
    const { topic } = await post("/api/topics", { name: $("new-topic-name").value });
    $("new-topic-name").value = "";
    state.topics.set(topic.topic_id, topic);
    location.hash = `/topic/${encodeURIComponent(topic.topic_id)}`;
  });
  $("thread-state").addEventListener("change", async (event) => {
    const thread = await post(`/api/threads/${encodeURIComponent(state.current)}/state`, {
      state: event.target.value,
    });
    const topic = state.topics.get(thread.thread_id);
    if (topic) {
      state.topics.set(thread.thread_id, { ...topic, status: "open", thread_state: thread.status });
    }
    renderTopicHead();
    renderTopics();
  });
  $("close-topic").addEventListener("click", async () => {
    const reason = prompt("Close this topic? Reason (optional):");
    if (reason === null) return;
    const { topic } = await post(`/api/topics/${encodeURIComponent(state.current)}/close`, {
      reason: reason || undefined,
    });
    state.topics.set(topic.topic_id, topic);
    renderTopicHead();
    renderTopics();
  });
  $("messages").addEventListener("click", async (event) => {
    // A reply to a message not loaded yet: load older pages until it is, then show it.
    const link = event.target.closest?.(".reply-link");
    if (!link || link.getAttribute("href") !== "#") return;
    event.preventDefault();
    const id = link.dataset.reply;
    while (!state.messages.has(id) && !$("older").hidden) await loadOlder();
    const target = state.messages.get(id);
    if (target) await focusMessage(target.seq);
  });
  document.addEventListener("keydown", (event) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? "");
    if (event.key === "/" && !typing) {
      event.preventDefault();
      $("search-input").focus();
    } else if (event.key === "Escape" && state.replyTo) {
      state.replyTo = null;
      renderReply();
    } else if ((event.key === "j" || event.key === "k") && !typing && state.current) {
      // j / k: next / previous message; r: reply to the focused one.
      const items = [...$("messages").children];
      const at = items.indexOf(document.activeElement);
      const next = items[at === -1 ? items.length - 1 : at + (event.key === "j" ? 1 : -1)];
      next?.focus();
      next?.scrollIntoView({ block: "nearest" });
    } else if (event.key === "r" && !typing && document.activeElement?.dataset?.id) {
      event.preventDefault();
      startReply(state.messages.get(document.activeElement.dataset.id));
    }
  });
  addEventListener("hashchange", route);
  await loadTopics();
  connect();
  await route();
}

main().catch((error) => setLive(error.message, false));
