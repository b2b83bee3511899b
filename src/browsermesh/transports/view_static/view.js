// BrowserMesh live view: renders the grid the server streams over Server-Sent Events.
// Read-only by design: nothing here sends anything back but the EventSource itself.
// Every value is set with textContent (never as HTML); pictures are data: URLs of JPEGs.
"use strict";

const grid = document.getElementById("grid");
const cards = new Map(); // sessionId -> {root, pages: Map(pageId -> {img, title, url})}
const pictures = new Map(); // "sessionId/pageId" -> newest frame (it may come before its card)
let enlarged = null;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function card(session) {
  let entry = cards.get(session.sessionId);
  if (!entry) {
    const root = el("article", "card");
    root.dataset.sessionId = session.sessionId;
    root.addEventListener("click", () => {
      enlarged = enlarged === session.sessionId ? null : session.sessionId;
      for (const [id, e] of cards) e.root.classList.toggle("big", id === enlarged);
    });
    entry = { root, pages: new Map(), head: el("div", "head"), labels: el("div", "labels"),
      shots: el("div", "shots"), ops: el("ul", "ops") };
    root.append(entry.head, entry.labels, entry.shots, entry.ops);
    cards.set(session.sessionId, entry);
  }
  return entry;
}

function renderSession(session) {
  const entry = card(session);
  entry.head.replaceChildren(
    el("span", "name", session.name || "(unnamed)"),
    el("span", "sid", session.sessionId),
    el("span", "status " + session.status, session.failureCode || session.status));
  entry.labels.replaceChildren(...Object.entries(session.metadata || {}).map(
    ([k, v]) => el("span", "label", k + "=" + v)));
  const seen = new Set();
  for (const page of session.pages) {
    seen.add(page.pageId);
    let p = entry.pages.get(page.pageId);
    if (!p) {
      const root = el("div", "page");
      const img = el("img", "pic");
      img.alt = "page " + page.pageId;
      p = { root, img, title: el("div", "title"), url: el("div", "url") };
      root.append(img, p.title, p.url);
      entry.pages.set(page.pageId, p);
      entry.shots.append(root);
      const early = pictures.get(session.sessionId + "/" + page.pageId);
      if (early) show(img, early);
    }
    p.root.dataset.pageId = page.pageId;
    p.title.textContent = (page.crashed ? "[crashed] " : "") + (page.title || "");
    p.url.textContent = page.url;
    p.url.title = page.url;
  }
  for (const [id, p] of entry.pages) {
    if (!seen.has(id)) {
      p.root.remove(); entry.pages.delete(id); pictures.delete(session.sessionId + "/" + id);
    }
  }
  entry.ops.replaceChildren(...session.operations.slice().reverse().map((op) => {
    const li = el("li");
    li.append(el("span", "tool", op.tool),
      el("span", "code " + (op.code === "OK" ? "ok" : "err"), op.code),
      el("span", "ms", op.durationMs + " ms"));
    return li;
  }));
  return entry.root;
}

function renderState(state) {
  document.getElementById("principal").textContent = "principal: " + state.principal;
  document.getElementById("count").textContent = "· " + state.sessions.length + " session(s)";
  const keep = new Set(state.sessions.map((s) => s.sessionId));
  for (const [id, entry] of cards) {
    if (!keep.has(id)) {
      entry.root.remove(); cards.delete(id);
      for (const key of pictures.keys()) if (key.startsWith(id + "/")) pictures.delete(key);
    }
  }
  grid.replaceChildren(...state.sessions.map(renderSession));
  document.getElementById("empty").hidden = state.sessions.length > 0;
}

function show(img, frame) {
  img.src = "data:image/jpeg;base64," + frame.data;
  img.dataset.source = frame.source;
}

function renderFrame(frame) {
  pictures.set(frame.sessionId + "/" + frame.pageId, frame);
  const entry = cards.get(frame.sessionId);
  const page = entry && entry.pages.get(frame.pageId);
  if (page) show(page.img, frame);
}

function connect() {
  const link = document.getElementById("link");
  const events = new EventSource("/view/events");
  events.addEventListener("open", () => { link.textContent = "live"; link.classList.remove("down"); });
  events.addEventListener("error", () => {
    link.classList.add("down");
    link.textContent = events.readyState === EventSource.CLOSED
      ? "signed out: open a new link (browsermesh view-link)" : "reconnecting…";
  });
  events.addEventListener("state", (e) => renderState(JSON.parse(e.data)));
  events.addEventListener("frame", (e) => renderFrame(JSON.parse(e.data)));
}

connect();
