// A node's recent log records (appended as they arrive) and its threads' stacks.

import { el, replace } from "./dom.js";
import * as fmt from "./format.js";

const KNOWN_LEVELS = new Set(["debug", "info", "warning", "error", "critical"]);
const NEAR_BOTTOM_PX = 24;

function recordKey(r) {
  return `${r.time}|${r.pid}|${r.process}|${r.logger}|${r.message}`;
}

function levelClass(level) {
  const l = String(level || "").toLowerCase();
  return KNOWN_LEVELS.has(l) ? l : "other";
}

function recordRow(r) {
  const level = levelClass(r.level);
  return el("div", { class: `log-record ${level}`, "data-level": String(r.level || "") }, [
    el("span", { class: "log-time", text: fmt.logTime(r.time), title: fmt.fullTime(r.time) }),
    el("span", { class: "log-level", text: String(r.level || "") }),
    el("span", { class: "log-process", text: r.process || "", title: r.pid ? `pid ${r.pid}` : null }),
    el("span", { class: "log-logger", text: r.logger || "" }),
    el("span", { class: "log-message", text: r.message ?? "" }),
  ]);
}

/**
 * The log panel: newest record at the bottom. It follows new records while the
 * reader is at the bottom, and stays put once they scroll up to read.
 */
export class LogView {
  constructor(limit) {
    this.limit = limit;
    this.lastKey = null;
    this.box = el("div", { id: "logs", class: "logs", tabindex: "0", "aria-live": "off" });
    this.errors = el("div", { class: "log-errors" });
    this.paused = el("span", { class: "muted small follow-note", hidden: true, text: "auto-scroll paused: scroll to the bottom to follow" });
    this.count = el("span", { class: "muted small" });
    this.section = el("section", { class: "card" }, [
      el("div", { class: "section-head" }, [el("h2", { text: "Recent logs" }), this.count, this.paused]),
      this.errors,
      this.box,
    ]);
    this.box.addEventListener("scroll", () => {
      this.paused.hidden = this.atBottom();
    });
  }

  atBottom() {
    return this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight < NEAR_BOTTOM_PX;
  }

  /** Show a logs API reply: append the records not shown yet. */
  update(data) {
    this.box.hidden = false;
    const records = data.records || [];
    const follow = this.lastKey === null || this.atBottom();
    const keys = records.map(recordKey);
    let start = 0;
    if (this.lastKey !== null) {
      const i = keys.lastIndexOf(this.lastKey);
      if (i >= 0) start = i + 1;
      else this.box.replaceChildren(); // the window moved past what we showed: start over
    }
    this.box.querySelector(":scope > .log-empty")?.remove();
    const frag = document.createDocumentFragment();
    for (const r of records.slice(start)) frag.append(recordRow(r));
    this.box.append(frag);
    while (this.box.childElementCount > this.limit) this.box.firstElementChild.remove();
    if (records.length) this.lastKey = keys[keys.length - 1];
    if (!this.box.childElementCount) this.box.append(el("p", { class: "muted log-empty", text: "No log records yet." }));
    this.count.textContent = `${fmt.plural(this.box.querySelectorAll(".log-record").length, "record")}`;
    if (follow) this.box.scrollTop = this.box.scrollHeight;
    this.paused.hidden = follow || this.atBottom();
    replace(this.errors, (data.errors || []).map((e) =>
      el("p", { class: "warning-line", text: `logs of ${e.process} could not be read: ${e.error}` })));
  }

  /** The node cannot be asked for its logs (lost, unreachable): say so, keep what was shown. */
  unavailable(text) {
    replace(this.errors, el("p", { class: "warning-line", text }));
    this.box.hidden = !this.box.querySelector(".log-record");
  }
}

function threadBlock(t, wasOpen) {
  return el("details", { class: "thread", "data-thread": String(t.id ?? ""), open: wasOpen(t) }, [
    el("summary", {}, [
      el("span", { class: "thread-name", text: t.name || "(unnamed)" }),
      el("span", { class: "muted small", text: ` id ${t.id ?? "–"}${t.daemon ? " · daemon" : ""}` }),
    ]),
    el("pre", { class: "stack", text: t.stack || "(no frames)" }),
  ]);
}

function processBlock(p, opened) {
  const threads = p.threads || [];
  const wasOpen = (t) => opened.threads.has(`${p.process}|${t.id}`);
  return el("details", { class: "process", open: !opened.closed.has(p.process || ""), "data-process": p.process || "" }, [
    el("summary", {}, [
      el("strong", { text: p.process || "process" }),
      el("span", { class: "muted", text: ` ${p.address || ""} · pid ${p.pid ?? "–"} · ${fmt.plural(threads.length, "thread")}` }),
    ]),
    el("div", { class: "threads" }, threads.map((t) => threadBlock(t, wasOpen))),
  ]);
}

// which blocks the reader opened or closed, so a refresh keeps them that way
function openedBlocks(box) {
  const threads = new Set();
  const closed = new Set();
  for (const d of box.querySelectorAll("details.process")) {
    if (!d.open) closed.add(d.dataset.process);
    for (const t of d.querySelectorAll("details.thread[open]")) threads.add(`${d.dataset.process}|${t.dataset.thread}`);
  }
  return { threads, closed };
}

/** Show a stacks API reply in `box` (or `note` when there is nothing to show). */
export function renderStacks(box, data, note) {
  if (!data) {
    replace(box, el("p", { class: "muted", text: note }));
    return;
  }
  const errors = (data.errors || []).map((e) =>
    el("p", { class: "warning-line", text: `stacks of ${e.process} could not be read: ${e.error}` }));
  const opened = openedBlocks(box);
  const processes = (data.processes || []).map((p) => processBlock(p, opened));
  if (!processes.length && !errors.length) processes.push(el("p", { class: "muted", text: "No process answered." }));
  replace(box, [...errors, ...processes]);
}
