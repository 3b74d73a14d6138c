// The statistical profile of a task: where its chunk functions spent their time, as a flame graph.
//
// The workers' slots sample the stack of the subtask they run every 10 ms (see
// mars/services/execution/profiler.py); a profile API reply (docs/web-api.md, "Profile") counts the
// stacks by operator. FlameGraph draws one as SVG, the task on top, then its operators (coloured as in
// the task stream), then the functions each called, each box as wide as its share of the samples. A
// box is a <g class="fg-node"> with data-name, data-depth and a <title> the browser shows on hover;
// clicking one zooms into it, clicking the top row zooms out. The operator picker shows one operator's
// graph alone. It imports only dom.js, format.js and stream.js, so the performance report can inline it.

import { el, replace, svg } from "./dom.js";
import * as fmt from "./format.js";
import { colourOf } from "./stream.js";

const ROW = 18; // px per level
const MIN_PX = 0.5; // boxes narrower than this are not drawn (their parent's width still counts them)
const MAX_BOXES = 5000;
const WARM = ["#e8773a", "#ef9a48", "#f2b25c", "#e05d3a", "#f4c56c", "#d9822b", "#eaa14e", "#df6c44"];

/** A stable warm colour per function name. */
function warmOf(name) {
  let h = 7;
  for (let i = 0; i < name.length; i++) h = (h * 33 + name.charCodeAt(i)) | 0;
  return WARM[Math.abs(h) % WARM.length];
}

function node(name, kind, frame) {
  return { name, kind, frame, value: 0, children: new Map() };
}

/** The tree of a profile reply: root (the task), its operators, then their stacks; `op` keeps one. */
export function buildTree(profile, op = null) {
  const frames = profile.frames || [];
  const root = node(op || "all operators", op ? "op" : "root", null);
  for (const row of profile.rows || []) {
    if (op && row.op !== op) continue;
    root.value += row.count;
    let at = root;
    if (!op) {
      if (!at.children.has(row.op)) at.children.set(row.op, node(row.op, "op", null));
      at = at.children.get(row.op);
      at.value += row.count;
    }
    for (const i of row.stack) {
      const f = frames[i] || { name: "?", file: "", line: 0 };
      const key = `${f.name}\u0000${f.file}\u0000${f.line}`;
      if (!at.children.has(key)) at.children.set(key, node(f.name, "frame", f));
      at = at.children.get(key);
      at.value += row.count;
    }
  }
  return root;
}

/** Samples counted in each function itself (the leaf of a stack), most first: [{frame, count}]. */
export function selfTimes(profile, op = null) {
  const counts = new Map();
  for (const row of profile.rows || []) {
    if ((op && row.op !== op) || !row.stack.length) continue;
    const i = row.stack[row.stack.length - 1];
    counts.set(i, (counts.get(i) || 0) + row.count);
  }
  return Array.from(counts.entries()).sort((a, b) => b[1] - a[1])
    .map(([i, count]) => ({ frame: (profile.frames || [])[i], count }));
}

function shortFile(file) {
  const parts = (file || "").split("/");
  return parts.slice(-2).join("/");
}

function tip(n, total, interval) {
  const share = total ? n.value / total : 0;
  const head = n.kind === "frame" ? `${n.name}  ${shortFile(n.frame.file)}:${n.frame.line}` :
    n.kind === "op" ? `operator ${n.name}` : "all operators";
  return `${head}\n${fmt.plural(n.value, "sample")} (${fmt.percent(share)}), about ${fmt.duration(n.value * interval)} of slot time`;
}

/** A flame graph drawn into `this.box`; `update(reply)` redraws it when its samples changed. */
export class FlameGraph {
  constructor({ width = null } = {}) {
    this.fixedWidth = width;
    this.profile = { frames: [], rows: [], samples: 0, interval: 0.01 };
    this.op = null;
    this.zoom = []; // the path of names from the root to the zoomed box
    this.picker = el("select", { class: "fg-op", "aria-label": "operator" });
    this.picker.addEventListener("change", () => { this.op = this.picker.value || null; this.zoom = []; this.draw(); });
    this.note = el("p", { class: "muted fg-note" });
    this.svg = svg("svg", { class: "flame", role: "img", "aria-label": "flame graph" });
    this.topBox = el("ol", { class: "fg-top mono" });
    this.box = el("div", { class: "flame-box" }, [
      el("div", { class: "section-head" }, [el("label", {}, ["Operator ", this.picker])]), this.note,
      el("div", { style: "overflow-x: auto" }, this.svg),
      el("h3", { text: "Functions by time spent in them (self)" }), this.topBox]);
  }

  update(profile) {
    const same = this.profile.samples === profile.samples && this.profile.rows.length === (profile.rows || []).length;
    this.profile = { ...profile, frames: profile.frames || [], rows: profile.rows || [] };
    if (same && this.svg.childNodes.length) return; // nothing new: keep the zoom and the hover
    const ops = Array.from(new Set(this.profile.rows.map((r) => r.op))).sort();
    if (this.op && !ops.includes(this.op)) this.op = null;
    replace(this.picker, [el("option", { value: "", text: "all operators" }),
      ...ops.map((o) => el("option", { value: o, text: o, selected: o === this.op }))]);
    this.draw();
  }

  draw() {
    const p = this.profile;
    const tree = buildTree(p, this.op);
    this.box.dataset.samples = String(tree.value);
    this.note.textContent = tree.value ? `${fmt.plural(p.samples, "sample")}, one every ${fmt.duration(p.interval)} of a busy slot` +
      (p.dropped ? ` (${fmt.plural(p.dropped, "older sample")} dropped)` : "") + ". Click a box to zoom in, the top row to zoom out."
      : "No samples yet: a slot is sampled while it runs a subtask, every " + fmt.duration(p.interval) + ".";
    let top = tree;
    const path = [];
    for (const name of this.zoom) {
      const next = Array.from(top.children.values()).find((c) => c.name === name);
      if (!next) break;
      top = next;
      path.push(name);
    }
    this.zoom = path;
    const width = this.fixedWidth || Math.max(600, (this.box.clientWidth || 1100) - 4);
    const boxes = [];
    this.layout(top, 0, width, 0, width / Math.max(top.value, 1), boxes, path);
    const height = (Math.max(0, ...boxes.map((b) => b.depth)) + 1) * ROW;
    this.svg.setAttribute("width", width);
    this.svg.setAttribute("height", height);
    this.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const frag = document.createDocumentFragment();
    for (const b of boxes) frag.append(this.boxOf(b, tree.value, p.interval));
    this.svg.replaceChildren(frag);
    this.listTop(p);
  }

  layout(n, x, w, depth, scale, out, path) {
    if (out.length >= MAX_BOXES || w < MIN_PX) return;
    out.push({ n, x, w, depth, path });
    let at = x;
    const kids = Array.from(n.children.values()).sort((a, b) => b.value - a.value || a.name.localeCompare(b.name));
    for (const c of kids) {
      const cw = c.value * scale;
      this.layout(c, at, cw, depth + 1, scale, out, [...path, c.name]);
      at += cw;
    }
  }

  boxOf(b, total, interval) {
    const n = b.n;
    const fill = n.kind === "op" ? colourOf(n.name) : n.kind === "root" ? "#9aa5b1" : warmOf(n.name);
    const g = svg("g", { class: `fg-node fg-${n.kind}`, "data-name": n.name, "data-depth": b.depth,
      "data-samples": n.value, style: "cursor: pointer" }, [
      svg("title", { text: tip(n, total, interval) }),
      svg("rect", { x: b.x.toFixed(2), y: b.depth * ROW, width: Math.max(b.w - 0.5, 0.5).toFixed(2), height: ROW - 1,
        fill, stroke: "rgba(0,0,0,0.15)", "stroke-width": 0.5 }),
    ]);
    const chars = Math.floor((b.w - 6) / 6.5);
    if (chars >= 3) {
      const label = n.name.length > chars ? `${n.name.slice(0, chars - 1)}…` : n.name;
      g.append(svg("text", { x: (b.x + 3).toFixed(2), y: b.depth * ROW + ROW - 5, "font-size": 11,
        "font-family": "monospace", "pointer-events": "none", fill: n.kind === "op" ? "#fff" : "#1b1b1b", text: label }));
    }
    g.addEventListener("click", () => {
      this.zoom = b.depth === 0 ? this.zoom.slice(0, -1) : b.path;
      this.draw();
    });
    return g;
  }

  listTop(p) {
    const total = p.samples || 1;
    const items = selfTimes(p, this.op).slice(0, 12).filter((t) => t.frame)
      .map((t) => el("li", { "data-name": t.frame.name, title: `${t.frame.file}:${t.frame.line}` },
        `${t.frame.name} (${shortFile(t.frame.file)}:${t.frame.line}): ${fmt.plural(t.count, "sample")}, ${fmt.percent(t.count / total)}`));
    replace(this.topBox, items);
  }
}
