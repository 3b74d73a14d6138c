// Drawing a task's graph in SVG, and keeping it current.
//
// The SVG is built once per node/edge set (DOM calls, no markup strings); a
// refresh with the same set only sets the attributes that changed (data-state,
// a progress width, a tooltip), so a 2,000-node graph updates every second
// without being laid out again. Colours come from CSS keyed on data-state.
// One node may be selected (`select(id)`, or a click on it): it gets a ring and
// class "selected", and `focus(id)` zooms and pans it into the middle of the view.

import { el, svg } from "./dom.js";
import { layout } from "./graph.js";

/** The states of each level, in the order the legend lists them. */
export const STATES = {
  tileable: ["pending", "running", "succeeded", "failed", "cancelled"],
  subtask: ["waiting", "scheduled", "succeeded", "failed", "cancelled"],
};

// Boxes with labels for tileables and small subtask graphs; dots when a subtask graph is big.
const BOX = { width: 170, height: 42, gapX: 22, gapY: 46, rowGap: 14, maxRowWidth: 1500 };
const SMALL_BOX = { width: 136, height: 32, gapX: 14, gapY: 36, rowGap: 10, maxRowWidth: 1500 };
const DOT = { width: 12, height: 12, gapX: 6, gapY: 30, rowGap: 6, maxRowWidth: 1200 };
const DOTS_ABOVE = 120;
const PAD = 16;
const CHAR_PX = 6.4; // average width of a 11-12px system font character, to shorten labels

/** A legend of the state colours of `level`, with a count per state when given. */
export function legend(level, counts) {
  return el("div", { class: "legend" }, STATES[level].map((state) =>
    el("span", { class: "legend-item" }, [
      el("span", { class: "swatch", "data-state": state }),
      counts ? `${state} (${counts[state] || 0})` : state,
    ])));
}

function shorten(text, px) {
  const most = Math.max(3, Math.floor(px / CHAR_PX));
  const s = String(text ?? "");
  return s.length <= most ? s : `${s.slice(0, most - 1)}…`;
}

function tooltip(n) {
  const lines = [n.label || "(unnamed)", `id: ${n.id}`, `state: ${n.state}`];
  if (n.op && n.op !== n.label) lines.push(`ops: ${n.op}`);
  if (n.shape !== undefined) lines.push(`shape: ${n.shape}`);
  if (n.progress !== undefined && n.progress !== null) lines.push(`progress: ${Math.floor(n.progress * 100)}%`);
  if (n.worker !== undefined) lines.push(`worker: ${n.worker ?? "not assigned yet"}`);
  if (n.stage !== undefined) lines.push(`stage: ${n.stage}`);
  return lines.join("\n");
}

// tileables report progress; a subtask is filled in its state's colour once it left "waiting"
function progressOf(n) {
  if (typeof n.progress === "number") return Math.max(0, Math.min(1, n.progress));
  return n.state === "waiting" || n.state === "pending" ? 0 : 1;
}

/** The identity of a graph's node and edge set: the layout changes only when this does. */
function structureKey(graph) {
  const ids = graph.nodes.map((n) => n.id).join("\u0001");
  const edges = graph.edges.map((e) => `${e[0]}\u0002${e[1]}`).join("\u0001");
  return `${graph.level}\u0003${ids}\u0003${edges}`;
}

export class GraphView {
  /** `onSelect(node)` is called when a click selects a node (the node of the graph reply). */
  constructor({ onSelect = null } = {}) {
    this.onSelect = onSelect;
    this.selected = null; // id of the selected node, kept across rebuilds
    this.svg = svg("svg", { id: "graph", class: "graph", role: "img", "aria-label": "task graph" });
    this.clipRect = svg("rect", { rx: 6, ry: 6 });
    const defs = svg("defs", {}, svg("clipPath", { id: "graph-node-clip", clipPathUnits: "userSpaceOnUse" }, this.clipRect));
    this.edgeLayer = svg("g", { class: "edges" });
    this.nodeLayer = svg("g", { class: "nodes" });
    this.viewport = svg("g", { class: "viewport" }, [this.edgeLayer, this.nodeLayer]);
    this.svg.append(defs, this.viewport);
    this.key = null;
    this.items = new Map(); // node id -> {g, fill, title, state, progress, tip, node, cx, cy, ring}
    this.view = { x: 0, y: 0, k: 1 };
    this.moved = false; // the user panned or zoomed: keep their view across refreshes
    this.size = { width: 0, height: 0 };
    this.listen();
  }

  /** Show `graph` (a graph API reply): rebuild if its node/edge set changed, else refresh states. */
  update(graph) {
    const key = structureKey(graph);
    if (key !== this.key) {
      this.build(graph);
      this.key = key;
      if (!this.moved) this.fit();
    } else {
      this.refresh(graph);
    }
  }

  build(graph) {
    const dots = graph.level === "subtask" && graph.nodes.length > DOTS_ABOVE;
    const box = dots ? DOT : graph.level === "subtask" ? SMALL_BOX : BOX;
    const placed = layout(graph.nodes, graph.edges, box);
    this.size = { width: placed.width, height: placed.height };
    this.clipRect.setAttribute("width", box.width);
    this.clipRect.setAttribute("height", box.height);
    this.svg.classList.toggle("dots", dots);
    this.items.clear();
    this.edgeLayer.replaceChildren(this.edgePaths(placed, box));
    const frag = document.createDocumentFragment();
    graph.nodes.forEach((n, i) => {
      const item = dots ? this.dot(n, placed.x[i], placed.y[i]) : this.box(n, placed.x[i], placed.y[i], box);
      Object.assign(item, { node: n, cx: placed.x[i], cy: placed.y[i] });
      this.items.set(n.id, item);
      frag.append(item.g);
    });
    this.nodeLayer.replaceChildren(frag);
    if (this.selected !== null) this.mark(this.items.get(this.selected), true);
  }

  edgePaths(placed, box) {
    const frag = document.createDocumentFragment();
    const half = box.height / 2;
    placed.succs.forEach((targets, a) => {
      for (const b of targets) {
        const x1 = placed.x[a], y1 = placed.y[a] + half;
        const x2 = placed.x[b], y2 = placed.y[b] - half;
        const bend = Math.max(8, (y2 - y1) / 2);
        const d = `M${x1.toFixed(1)},${y1.toFixed(1)} C${x1.toFixed(1)},${(y1 + bend).toFixed(1)} ` +
          `${x2.toFixed(1)},${(y2 - bend).toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`;
        frag.append(svg("path", { class: "edge", d }));
      }
    });
    return frag;
  }

  box(n, cx, cy, box) {
    const progress = progressOf(n);
    const tip = tooltip(n);
    const title = svg("title", { text: tip });
    const fill = svg("rect", { class: "fill", width: (progress * box.width).toFixed(1), height: box.height,
      "clip-path": "url(#graph-node-clip)" });
    const second = n.shape !== undefined ? n.shape : n.worker ? `on ${n.worker}` : `#${n.id}`;
    const g = svg("g", { class: "node box", "data-id": n.id, "data-state": n.state,
      transform: `translate(${(cx - box.width / 2).toFixed(1)},${(cy - box.height / 2).toFixed(1)})` }, [
      title,
      svg("rect", { class: "bg", width: box.width, height: box.height, rx: 6, ry: 6 }),
      fill,
      svg("rect", { class: "outline", width: box.width, height: box.height, rx: 6, ry: 6 }),
      svg("text", { class: "label", x: 8, y: box.height / 2 - 3, text: shorten(n.label, box.width - 16) }),
      svg("text", { class: "sub", x: 8, y: box.height / 2 + 11, text: shorten(second, box.width - 16) }),
    ]);
    return { g, fill, title, state: n.state, progress, tip, width: box.width };
  }

  dot(n, cx, cy) {
    const tip = tooltip(n);
    const title = svg("title", { text: tip });
    const g = svg("g", { class: "node dot", "data-id": n.id, "data-state": n.state,
      transform: `translate(${cx.toFixed(1)},${cy.toFixed(1)})` }, [title, svg("circle", { class: "outline", r: 6 })]);
    return { g, fill: null, title, state: n.state, progress: progressOf(n), tip, width: 0 };
  }

  /** Same node set: set only what changed. */
  refresh(graph) {
    for (const n of graph.nodes) {
      const item = this.items.get(n.id);
      if (!item) continue;
      item.node = n;
      if (item.state !== n.state) {
        item.state = n.state;
        item.g.setAttribute("data-state", n.state);
      }
      const progress = progressOf(n);
      if (item.fill && item.progress !== progress) {
        item.progress = progress;
        item.fill.setAttribute("width", (progress * item.width).toFixed(1));
      }
      const tip = tooltip(n);
      if (item.tip !== tip) {
        item.tip = tip;
        item.title.textContent = tip;
      }
    }
  }

  // ------------------------------------------------------------ selection
  /** Select the node `id` (null: none); returns its node of the graph reply, or null if it is not drawn. */
  select(id) {
    if (this.selected !== null) this.mark(this.items.get(this.selected), false);
    this.selected = id === null || id === undefined ? null : String(id);
    const item = this.selected !== null ? this.items.get(this.selected) : undefined;
    this.mark(item, true);
    return item ? item.node : null;
  }

  /** The selected node (of the latest graph reply), or null. */
  selectedNode() {
    const item = this.selected !== null ? this.items.get(this.selected) : undefined;
    return item ? item.node : null;
  }

  mark(item, on) {
    if (!item) return;
    item.g.classList.toggle("selected", on);
    if (on) this.nodeLayer.append(item.g); // drawn last, so that no neighbour covers its ring
    if (on && !item.ring) {
      const dot = item.g.classList.contains("dot");
      item.ring = dot ? svg("circle", { class: "ring", r: 11 })
        : svg("rect", { class: "ring", x: -4, y: -4, width: item.width + 8,
          height: Number(item.g.querySelector("rect.bg").getAttribute("height")) + 8, rx: 9, ry: 9 });
      item.g.append(item.ring);
    } else if (!on && item.ring) {
      item.ring.remove();
      item.ring = null;
    }
  }

  /** Zoom and pan so that node `id` is in the middle of the view, big enough to see (dots: zoomed in). */
  focus(id) {
    const item = this.items.get(String(id));
    if (!item) return false;
    if (!this.svg.style.height) this.fit();
    const width = this.svg.clientWidth || this.svg.parentNode?.clientWidth || 800;
    const height = this.svg.clientHeight || parseFloat(this.svg.style.height) || 320;
    const want = item.g.classList.contains("dot") ? 2 : 1;
    const { x, y, k: now } = this.view;
    const sx = x + item.cx * now, sy = y + item.cy * now; // where the node is now, in the box
    // a graph fitted at full size that shows the node already: left as it is, whole
    if (now >= want && sx > 0 && sx < width && sy > 0 && sy < height) return true;
    const k = Math.min(4, Math.max(now, want));
    this.view = { x: width / 2 - item.cx * k, y: height / 2 - item.cy * k, k };
    this.moved = true; // keep this view across refreshes, as if the user had panned here
    this.apply();
    return true;
  }

  // ------------------------------------------------------------ view: fit, pan, zoom
  /** Scale the whole graph into the box (never above 1:1) and centre it. */
  fit() {
    const maxHeight = Math.max(320, Math.round(window.innerHeight * 0.7));
    const width = this.svg.clientWidth || this.svg.parentNode?.clientWidth || 800;
    const k = Math.min(1, (width - 2 * PAD) / Math.max(1, this.size.width),
      (maxHeight - 2 * PAD) / Math.max(1, this.size.height));
    const height = Math.max(160, Math.min(maxHeight, Math.ceil(this.size.height * k + 2 * PAD)));
    this.svg.style.height = `${height}px`;
    this.view = { x: (width - this.size.width * k) / 2, y: PAD, k };
    this.moved = false;
    this.apply();
  }

  apply() {
    const { x, y, k } = this.view;
    this.viewport.setAttribute("transform", `translate(${x.toFixed(2)},${y.toFixed(2)}) scale(${k.toFixed(5)})`);
  }

  listen() {
    this.svg.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.svg.addEventListener("pointerdown", (e) => this.onDown(e));
    this.svg.addEventListener("pointermove", (e) => this.onMove(e));
    this.svg.addEventListener("pointerup", (e) => this.onUp(e));
    this.svg.addEventListener("pointercancel", (e) => this.onUp(e));
  }

  onWheel(e) {
    e.preventDefault();
    const rect = this.svg.getBoundingClientRect();
    const px = e.clientX - rect.left, py = e.clientY - rect.top;
    const k = Math.max(0.02, Math.min(4, this.view.k * Math.exp(-e.deltaY * 0.0015)));
    const ratio = k / this.view.k;
    this.view = { x: px - (px - this.view.x) * ratio, y: py - (py - this.view.y) * ratio, k };
    this.moved = true;
    this.apply();
  }

  onDown(e) {
    if (e.button !== 0) return;
    const node = e.target.closest ? e.target.closest("g.node") : null;
    this.drag = { id: e.pointerId, x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, node, far: false };
    this.svg.setPointerCapture(e.pointerId);
    this.svg.classList.add("dragging");
  }

  onMove(e) {
    if (!this.drag || e.pointerId !== this.drag.id) return;
    this.view = { ...this.view, x: this.drag.vx + e.clientX - this.drag.x, y: this.drag.vy + e.clientY - this.drag.y };
    if (Math.abs(e.clientX - this.drag.x) + Math.abs(e.clientY - this.drag.y) > 3) this.moved = this.drag.far = true;
    this.apply();
  }

  onUp(e) {
    if (!this.drag || e.pointerId !== this.drag.id) return;
    if (this.svg.hasPointerCapture(e.pointerId)) this.svg.releasePointerCapture(e.pointerId);
    const { node, far } = this.drag;
    this.drag = null;
    // a press and release on a node without dragging is a click on it (pointer capture hides its target)
    if (node && !far && e.type === "pointerup") {
      const picked = this.select(node.dataset.id);
      if (picked && this.onSelect) this.onSelect(picked);
    }
    this.svg.classList.remove("dragging");
  }
}
