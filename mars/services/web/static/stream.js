// The task stream: one row per slot of each worker, a bar per subtask (colour by operator,
// width by duration), transfers (the inputs a slot waited for from other workers) and spills.
//
// StreamView draws a stream API reply (docs/web-api.md, "Task stream") as SVG. Each bar is a
// <rect class="ev ev-KIND"> with data-worker, data-slot, data-op, data-task, data-index and a
// <title> that the browser shows on hover; with `linkTo`, a click opens the subtask in its task's
// graph (the task page at `<task hash>/subtasks/<index>`, which selects and shows that node).
// It imports only dom.js and format.js, so the performance report can inline it.

import { el, replace, svg } from "./dom.js";
import * as fmt from "./format.js";

const ROW = 18; // px per slot row
const GAP = 6; // px between workers
const LABEL = 170; // px of row labels on the left
const AXIS = 22; // px of the time axis at the top
const MAX_BARS = 20000; // more would make the page slow: the newest are drawn
const TRANSFER = "#d62728";
const SPILL = "#8c564b";
const PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#bcbd22", "#e377c2", "#7f7f7f",
  "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#31a354", "#756bb1"];

/** A stable colour per operator name (the same in every view and in the report). */
export function colourOf(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(h) % PALETTE.length];
}

function rowsOf(data, events) {
  // a row per slot of each worker; spills get a row of their own ("storage") where a worker has some
  const rows = [];
  const index = new Map();
  const workers = (data.workers || []).map((w) => ({ address: w.address, n: Math.max(1, w.n_slots || 1) }));
  for (const e of events) {
    if (!workers.some((w) => w.address === e.worker)) workers.push({ address: e.worker, n: 1 });
    const w = workers.find((x) => x.address === e.worker);
    if (e.slot >= w.n) w.n = e.slot + 1;
  }
  let y = AXIS;
  for (const w of workers) {
    for (let s = 0; s < w.n; s++) {
      index.set(`${w.address}|${s}`, rows.length);
      rows.push({ worker: w.address, slot: s, label: s === 0 ? `${w.address} · slot 0` : `slot ${s}`, y });
      y += ROW;
    }
    if (events.some((e) => e.worker === w.address && e.slot < 0)) {
      index.set(`${w.address}|-1`, rows.length);
      rows.push({ worker: w.address, slot: -1, label: "spills", y });
      y += ROW;
    }
    y += GAP;
  }
  return { rows, index, height: y };
}

function tip(e) {
  const lines = [
    e.kind === "subtask" ? `${e.name} (subtask ${e.index})` : e.kind === "transfer" ? `fetch from ${e.peer}` : "spill to disk",
    `${fmt.duration(e.end - e.start)} from ${fmt.logTime(e.start)}`,
    `worker ${e.worker}${e.slot >= 0 ? `, slot ${e.slot}` : ""}`,
    `${fmt.bytes(e.nbytes)}${e.keys && e.keys.length ? ` · ${e.keys.join(", ")}` : ""}`,
  ];
  if (e.task_id) lines.push(`task ${e.task_id}`);
  if (e.error) lines.push("failed");
  return lines.join("\n");
}

/** Where a subtask bar leads: its node on its task's page, or the task page where the index is unknown. */
export function subtaskHash(taskHash, index) {
  if (!taskHash) return null;
  return Number.isInteger(index) && index >= 0 ? `${taskHash}/subtasks/${index}` : taskHash;
}

/** A task stream drawn into `this.box`; `update(reply)` redraws it. */
export class StreamView {
  constructor({ linkTo = null, width = null } = {}) {
    this.linkTo = linkTo; // (event) => hash of its task page, or null; a bar opens its subtask there
    this.fixedWidth = width;
    this.svg = svg("svg", { class: "stream", role: "img", "aria-label": "task stream" });
    this.legendBox = el("div", { class: "stream-legend" });
    this.note = el("p", { class: "muted stream-note", hidden: true });
    this.box = el("div", { class: "stream-box" }, [this.legendBox, this.note, el("div", { class: "stream-scroll" }, this.svg)]);
  }

  update(data) {
    const events = (data.events || []).slice(-MAX_BARS);
    this.box.dataset.events = String(events.length);
    this.box.dataset.workers = String(new Set(events.filter((e) => e.kind === "subtask").map((e) => e.worker)).size);
    this.note.hidden = events.length > 0;
    this.note.textContent = events.length ? "" : "Nothing ran in this window yet.";
    const { rows, index, height } = rowsOf(data, events);
    const width = this.fixedWidth || Math.max(600, (this.box.clientWidth || 1100) - 4);
    const t0 = events.length ? Math.min(...events.map((e) => e.start)) : 0;
    const t1 = events.length ? Math.max(...events.map((e) => e.end)) : 1;
    const span = Math.max(t1 - t0, 1e-3);
    const scale = (width - LABEL - 8) / span;
    const x = (t) => LABEL + (t - t0) * scale;
    this.svg.setAttribute("width", width);
    this.svg.setAttribute("height", height);
    this.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const frag = document.createDocumentFragment();
    frag.append(this.axis(t0, span, width));
    for (const r of rows) {
      frag.append(svg("text", { class: "row-label", x: 4, y: r.y + ROW - 5, text: r.label }));
      frag.append(svg("line", { class: "row-line", x1: LABEL, x2: width, y1: r.y + ROW, y2: r.y + ROW }));
    }
    const ops = new Map();
    for (const e of events) {
      const row = rows[index.get(`${e.worker}|${e.slot}`)];
      if (!row) continue;
      const colour = e.kind === "transfer" ? TRANSFER : e.kind === "spill" ? SPILL : colourOf(e.name);
      if (e.kind === "subtask") ops.set(e.name, colour);
      frag.append(this.bar(e, row, x(e.start), Math.max(1, (e.end - e.start) * scale), colour));
    }
    this.svg.replaceChildren(frag);
    this.legend(ops, events);
  }

  bar(e, row, left, w, colour) {
    const rect = svg("rect", {
      class: `ev ev-${e.kind}${e.error ? " ev-error" : ""}`, x: left.toFixed(2), y: row.y + 2, width: w.toFixed(2),
      height: ROW - 4, fill: colour, "data-kind": e.kind, "data-worker": e.worker, "data-slot": e.slot,
      "data-op": e.name, "data-task": e.task_id || "", "data-index": e.index,
    }, svg("title", { text: tip(e) }));
    const hash = this.linkTo && e.kind === "subtask" ? subtaskHash(this.linkTo(e), e.index) : null;
    if (hash) {
      rect.classList.add("link");
      rect.addEventListener("click", () => { window.location.hash = hash; });
    }
    return rect;
  }

  axis(t0, span, width) {
    const g = svg("g", { class: "axis" });
    const ticks = 6;
    for (let i = 0; i <= ticks; i++) {
      const xx = LABEL + ((width - LABEL - 8) * i) / ticks;
      g.append(svg("line", { x1: xx, x2: xx, y1: AXIS - 4, y2: AXIS }));
      g.append(svg("text", { x: xx, y: AXIS - 8, "text-anchor": i === 0 ? "start" : "middle",
        text: i === 0 ? fmt.logTime(t0) : `+${fmt.duration((span * i) / ticks)}` }));
    }
    return g;
  }

  legend(ops, events) {
    const items = Array.from(ops.entries()).sort((a, b) => a[0].localeCompare(b[0]))
      .map(([name, colour]) => el("span", { class: "legend-item", "data-op": name }, [
        el("span", { class: "swatch", style: `background: ${colour}` }), name]));
    if (events.some((e) => e.kind === "transfer")) {
      items.push(el("span", { class: "legend-item" }, [el("span", { class: "swatch", style: `background: ${TRANSFER}` }), "transfer"]));
    }
    if (events.some((e) => e.kind === "spill")) {
      items.push(el("span", { class: "legend-item" }, [el("span", { class: "swatch", style: `background: ${SPILL}` }), "spill"]));
    }
    replace(this.legendBox, items);
  }
}

/** Merge a newer reply's events into `old` (by id), keeping those that end after `since`. */
export function mergeEvents(old, reply, since) {
  const byId = new Map();
  for (const e of old) if (e.end >= since) byId.set(e.id, e);
  for (const e of reply.events || []) byId.set(e.id, e);
  return Array.from(byId.values()).sort((a, b) => a.start - b.start);
}
