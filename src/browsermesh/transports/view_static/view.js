// BrowserMesh live view: renders the grid the server streams over Server-Sent Events, and lets
// a person take over one page of a session (mouse, keyboard, paste) and hand it back.
// Watching sends nothing back but the EventSource itself; only a take-over POSTs (to
// /view/hold, /view/input and /view/release), each body naming this tab as `viewer`.
// Every value is set with textContent (never as HTML); pictures are data: URLs of JPEGs.
"use strict";

const grid = document.getElementById("grid");
const cards = new Map(); // sessionId -> {root, name, notes, pages: Map(pageId -> {img, ...})}
const pictures = new Map(); // "sessionId/pageId" -> newest frame (it may come before its card)
let enlarged = null;
let wanted = hashSession(); // a card to enlarge once it exists (help links: /view/#s=<id>)
let lastState = null; // re-rendered when a take-over starts or ends ("held by you")

// This tab among the principal's viewers (a principal may have several tabs open); a reload
// is a new viewer, so it is kept nowhere.
const viewer = Array.from(crypto.getRandomValues(new Uint8Array(16)),
  (b) => b.toString(16).padStart(2, "0")).join("");
// How often a holding view pings when the server does not say (it says `pingMs` when it grants
// the hold: a fraction of its drop time, so a short BROWSERMESH_HOLD_DROP_MS never drops a view
// that is still open).
const PING_MS = 5000;
const MAX_BATCH = 200; // events per POST /view/input
const MAX_BYTES = 48000; // of events per POST (the server takes bodies up to 64 KiB)
const utf8 = new TextEncoder();
const PASTE_CHARS = 10000;
const BUTTONS = ["left", "middle", "right"]; // MouseEvent.button 0, 1, 2
const WAITING = "waiting for a picture…";
const UNFOCUSED = "click the picture to type into the page";
const UNSENDABLE = new Set(["Unidentified", "Process", "Dead"]); // IME and dead keys
const over = Object.fromEntries(["takeover", "takeover-name", "takeover-status", "takeover-note",
  "handback", "stage", "surface", "live"].map((id) => [id, document.getElementById(id)]));
// {sessionId, pageId, seen (a state listed the hold), ping (interval id), handingBack}
let holding = null;
const queue = []; // input events not yet POSTed, in order
let sending = null; // the one POST /view/input in flight (events keep their order)
let flushTimer = 0;
let noteTimer = 0;
const keysDown = new Map(); // KeyboardEvent.code -> key, released on the page if focus leaves
const pasteChords = new Set(); // codes of Ctrl/Cmd+V left to the browser (no keyup sent)

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function hashSession() {
  const match = /^#s=(.+)$/.exec(location.hash);
  try { return match ? decodeURIComponent(match[1]) : null; } catch { return null; }
}

function enlarge(sessionId) {
  enlarged = sessionId;
  for (const [id, e] of cards) e.root.classList.toggle("big", id === enlarged);
}

function card(session) {
  let entry = cards.get(session.sessionId);
  if (!entry) {
    const root = el("article", "card");
    root.dataset.sessionId = session.sessionId;
    root.addEventListener("click",
      () => enlarge(enlarged === session.sessionId ? null : session.sessionId));
    entry = { root, pages: new Map(), head: el("div", "head"), notes: el("div", "notes"),
      labels: el("div", "labels"), shots: el("div", "shots"), ops: el("ul", "ops"),
      recordings: el("div", "recordings") };
    root.append(entry.head, entry.notes, entry.labels, entry.shots, entry.ops, entry.recordings);
    cards.set(session.sessionId, entry);
  }
  return entry;
}

function renderSession(session) {
  const entry = card(session);
  const sid = session.sessionId;
  const mine = holding !== null && holding.sessionId === sid;
  entry.name = session.name || "(unnamed)";
  entry.head.replaceChildren(
    el("span", "name", entry.name),
    el("span", "sid", sid),
    el("span", "status " + session.status, session.failureCode || session.status));
  // The lines exist only while true, so `.help` / `.held` mean what they say.
  const notes = [];
  if (session.helpWanted) notes.push(el("div", "help", "help wanted: " + session.helpWanted));
  if (session.heldBy || mine) {
    notes.push(el("div", "held", "held by " + (mine ? "you" : session.heldBy)));
  }
  entry.notes.replaceChildren(...notes);
  entry.root.classList.toggle("help", Boolean(session.helpWanted));
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
      const takeover = el("button", "takeover", "Take over");
      takeover.type = "button";
      takeover.addEventListener("click", (e) => {
        e.stopPropagation(); // a button, not a click on the card (which enlarges it)
        takeOver(sid, page.pageId, takeover);
      });
      p = { root, img, title: el("div", "title"), url: el("div", "url"), takeover };
      root.append(img, p.title, p.url, takeover);
      entry.pages.set(page.pageId, p);
      entry.shots.append(root);
      const early = pictures.get(sid + "/" + page.pageId);
      if (early) show(img, early);
    }
    p.root.dataset.pageId = page.pageId;
    p.title.textContent = (page.crashed ? "[crashed] " : "") + (page.title || "");
    p.url.textContent = page.url;
    p.url.title = page.url;
    p.takeover.hidden = Boolean(session.heldBy) || mine;
    p.takeover.disabled = session.status !== "ready";
  }
  for (const [id, p] of entry.pages) {
    if (!seen.has(id)) {
      p.root.remove(); entry.pages.delete(id); pictures.delete(sid + "/" + id);
    }
  }
  entry.ops.replaceChildren(...session.operations.slice().reverse().map((op) => {
    const li = el("li");
    li.append(el("span", "tool", op.tool),
      el("span", "code " + (op.code === "OK" ? "ok" : "err"), op.code),
      el("span", "ms", op.durationMs + " ms"));
    return li;
  }));
  // Saved traces and videos (issue 35): links that download them (a trace opens in
  // Playwright's Trace Viewer: `playwright show-trace <file>`).
  entry.recordings.replaceChildren(...(session.recordings || []).map((r) => {
    const a = el("a", "recording " + r.kind, r.kind + ": " + r.name);
    a.href = "artifacts/" + encodeURIComponent(sid) + "/" + encodeURIComponent(r.artifactId);
    a.download = r.name;
    a.title = r.size + " bytes";
    a.addEventListener("click", (e) => e.stopPropagation());
    return a;
  }));
  return entry.root;
}

function renderState(state) {
  lastState = state;
  if (holding) {
    // A state built before the hold began does not list it yet: only a hold once seen and
    // now gone ends the take-over (the session closing ends it at once).
    const held = state.sessions.find((s) => s.sessionId === holding.sessionId);
    // (leave() renders this state again, without the hold.)
    const ended = holding.handingBack ? "handed back" : "take-over ended";
    if (!held) return leave(ended + ": the session closed");
    if (held.heldBy) holding.seen = true;
    else if (holding.seen) return leave(ended);
  }
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
  if (wanted !== null && cards.has(wanted)) {
    enlarge(wanted);
    cards.get(wanted).root.scrollIntoView({ block: "start" });
    wanted = null;
  }
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
  if (holding && holding.sessionId === frame.sessionId && holding.pageId === frame.pageId) {
    show(over.live, frame);
  }
}

// --- Take-over ------------------------------------------------------------------------------

async function post(path, body, keepalive = false) {
  try {
    const answer = await fetch(path, { method: "POST", credentials: "same-origin", keepalive,
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ viewer, ...body }) });
    let data = {};
    try { data = await answer.json(); } catch { /* no JSON body: the status says enough */ }
    return { status: answer.status, data };
  } catch {
    return { status: 0, data: {} }; // no connection
  }
}

function tell(text) {
  const note = over["takeover-note"];
  note.textContent = text;
  note.hidden = false;
  clearTimeout(noteTimer);
  noteTimer = setTimeout(() => { note.hidden = true; }, 8000);
}

// The take-over's status line; with `only`, changed only while it says that.
function status(text, only) {
  const line = over["takeover-status"];
  if (only === undefined || line.textContent === only) line.textContent = text;
}

function why(answer) {
  if (answer.status === 401 || answer.status === 403) return "signed out: open a new link";
  return answer.data.message || (answer.status ? "error " + answer.status : "no connection");
}

async function takeOver(sessionId, pageId, button) {
  if (holding) return;
  button.disabled = true;
  const answer = await post("/view/hold", { sessionId, pageId });
  button.disabled = false;
  if (answer.status === 200) enter(sessionId, pageId, answer.data.pingMs);
  else if (answer.status === 409) tell("already held by " + (answer.data.heldBy || "someone"));
  else if (answer.status === 404) tell("cannot take over: the page is gone");
  else tell("cannot take over: " + why(answer));
}

function enter(sessionId, pageId, pingMs) {
  if (holding) return;
  const entry = cards.get(sessionId);
  holding = { sessionId, pageId, seen: false,
    ping: setInterval(() => send({ type: "ping" }), pingMs > 0 ? pingMs : PING_MS) };
  over["takeover-name"].textContent = entry ? entry.name : sessionId;
  status("");
  over.handback.disabled = false;
  over.live.removeAttribute("width"); over.live.removeAttribute("height");
  const frame = pictures.get(sessionId + "/" + pageId);
  if (frame) show(over.live, frame); else over.live.removeAttribute("src");
  over.takeover.hidden = false;
  document.body.classList.add("holding");
  over.surface.focus({ preventScroll: true }); // keys go to the page from the start
  if (!frame) status(WAITING);
  fit();
  if (lastState) renderState(lastState);
}

// Hide the overlay and forget the hold (the server has ended it, or is told to by handBack).
function leave(note) {
  if (!holding) return;
  clearInterval(holding.ping);
  clearTimeout(flushTimer); flushTimer = 0;
  holding = null;
  queue.length = 0; keysDown.clear(); pasteChords.clear();
  over.takeover.hidden = true;
  document.body.classList.remove("holding");
  tell(note);
  if (lastState) renderState(lastState);
}

async function handBack() {
  const held = holding;
  if (!held) return;
  over.handback.disabled = true;
  while (holding === held && (sending || queue.length)) await (sending || flush()); // typed so far
  if (holding !== held) return; // the server ended it meanwhile
  held.handingBack = true; // the state without the hold may come before the answer
  await post("/view/release", { sessionId: held.sessionId }); // 409 (not the holder) is fine
  leave("handed back");
}

// Queue one input event. Moves (and wheel turns) coalesce with one queued just before, so
// a batch carries at most the latest move between two other events.
function send(event) {
  if (!holding) return;
  const last = queue[queue.length - 1];
  if (last && last.type === event.type && event.type === "move") {
    queue[queue.length - 1] = event;
  } else if (last && last.type === event.type && event.type === "wheel") {
    queue[queue.length - 1] = { ...event, dx: clampDelta(last.dx + event.dx),
      dy: clampDelta(last.dy + event.dy) };
  } else {
    queue.push(event);
  }
  if (!flushTimer) flushTimer = setTimeout(flush, 16); // about one animation frame
}

async function flush() {
  flushTimer = 0;
  const held = holding;
  if (sending || !held || !queue.length) return;
  const events = queue.splice(0, batchSize());
  sending = post("/view/input", { sessionId: held.sessionId, events });
  let answer;
  try { answer = await sending; } finally { sending = null; }
  if (holding !== held) return;
  if (answer.status === 409) {
    return leave("take-over ended: no input for a while, or the session closed");
  }
  if (answer.status === 401 || answer.status === 403) return leave("take-over ended: signed out");
  if (answer.status !== 200) status("input lost: " + why(answer));
  else if (over["takeover-status"].textContent.startsWith("input lost")) status("");
  if (queue.length) flush();
}

// How many queued events the next POST takes: up to MAX_BATCH and MAX_BYTES (at least one).
function batchSize() {
  let n = 0;
  for (let bytes = 0; n < queue.length && n < MAX_BATCH; n++) {
    bytes += utf8.encode(JSON.stringify(queue[n])).length + 1;
    if (n > 0 && bytes > MAX_BYTES) break;
  }
  return n;
}

function clampDelta(v) { return Math.max(-10000, Math.min(10000, v)); }
function fraction(v, start, size) {
  return size > 0 ? Math.min(1, Math.max(0, (v - start) / size)) : 0;
}

// Where the pointer is, as fractions of the picture (the picture is the page's whole viewport).
function at(e) {
  const r = over.live.getBoundingClientRect();
  return { x: fraction(e.clientX, r.left, r.width), y: fraction(e.clientY, r.top, r.height) };
}

// The picture as large as the window allows, aspect kept: the img box is exactly the picture
// (no letterboxing), so a fraction of the box is the same fraction of the page's viewport.
function fit() {
  const { naturalWidth: w, naturalHeight: h } = over.live;
  if (!holding || !w || !h) return;
  const scale = Math.min(over.stage.clientWidth / w, over.stage.clientHeight / h);
  over.live.width = Math.max(1, Math.floor(w * scale));
  over.live.height = Math.max(1, Math.floor(h * scale));
}

function mouse(kind) {
  return (e) => {
    if (e.button > 2) return; // back/forward buttons: the view's own
    if (kind === "down") { e.preventDefault(); over.surface.focus({ preventScroll: true }); }
    const clicks = Math.min(3, Math.max(1, e.detail || 1)); // 2 on a double click's second
    send({ type: kind, ...at(e), button: BUTTONS[e.button], clicks });
  };
}

// Ctrl/Cmd+V stays the browser's, so it fires `paste` with the clipboard's text.
function isPaste(e) {
  return (e.ctrlKey || e.metaKey) && !e.altKey && (e.key === "v" || e.key === "V");
}

function keyboard(kind) {
  return (e) => {
    if (kind === "keydown" && isPaste(e)) { pasteChords.add(e.code); return; }
    if (kind === "keyup" && pasteChords.delete(e.code)) return;
    e.preventDefault(); // Tab, Backspace, Ctrl+A... act on the page, not on the view
    if (e.isComposing || UNSENDABLE.has(e.key)) return;
    if (kind === "keydown") keysDown.set(e.code, e.key); else keysDown.delete(e.code);
    send({ type: kind, key: e.key });
  };
}

over.live.addEventListener("load", () => { status("", WAITING); fit(); });
window.addEventListener("resize", fit);
// The pointer stays captured while a button is down, so a drag ending outside still ends.
over.live.addEventListener("pointerdown", (e) => over.live.setPointerCapture(e.pointerId));
over.live.addEventListener("mousedown", mouse("down"));
over.live.addEventListener("mouseup", mouse("up"));
over.live.addEventListener("mousemove", (e) => send({ type: "move", ...at(e) }));
over.live.addEventListener("wheel", (e) => {
  e.preventDefault();
  const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? window.innerHeight : 1;
  const [dx, dy] = [clampDelta(e.deltaX * unit), clampDelta(e.deltaY * unit)];
  send({ type: "wheel", ...at(e), dx, dy });
}, { passive: false });
over.surface.addEventListener("contextmenu", (e) => e.preventDefault()); // right-click: the page's
over.surface.addEventListener("keydown", keyboard("keydown"));
over.surface.addEventListener("keyup", keyboard("keyup"));
over.surface.addEventListener("paste", (e) => {
  e.preventDefault();
  const text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
  if (text) send({ type: "text", text: text.slice(0, PASTE_CHARS) });
});
over.surface.addEventListener("focus", () => { status("", UNFOCUSED); });
over.surface.addEventListener("blur", () => {
  // Keys held when focus leaves would stay down on the page: release them there.
  for (const key of keysDown.values()) send({ type: "keyup", key });
  keysDown.clear();
  if (holding) status(UNFOCUSED);
});
over.handback.addEventListener("click", handBack);
// Closing the tab hands back at once (else the hold would lapse only after ~30 s).
window.addEventListener("pagehide", () => {
  if (holding) post("/view/release", { sessionId: holding.sessionId }, true);
});
window.addEventListener("hashchange", () => {
  wanted = hashSession();
  if (lastState) renderState(lastState);
});

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
