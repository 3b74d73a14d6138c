// One task: its status, progress, timing, error, and its graph at tileable or subtask level.
// At `<task>/subtasks/<index>` (where a task stream's bar leads) the subtask graph opens with that
// subtask's node selected and zoomed into view; clicking a node selects it. The selected node's
// details (op, state, worker, and from the task stream its chunk keys, size and duration) are shown
// under the graph.

import { ApiError, get, post, seg } from "./api.js";
import { badge, el, link, progressBar, replace } from "./dom.js";
import * as fmt from "./format.js";
import { GraphView, legend } from "./graphview.js";
import { findSession, sessionHash, taskDuration, taskHash } from "./sessions.js";
import { subtaskHash } from "./stream.js";

const POLL_MS = 1000;
const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

function header(sid, tid) {
  return [
    el("nav", { class: "crumbs" }, [
      link("#/sessions", "Sessions"), " › ", link(sessionHash(sid), sid, { class: "mono" }), " › ",
      el("span", { class: "mono", text: tid }),
    ]),
    el("h1", {}, ["Task ", el("span", { class: "mono", text: tid })]),
    el("p", {}, [link(`${sessionHash(sid)}/tasks/${encodeURIComponent(tid)}/stream`, "Task stream", { id: "task-stream-link" }),
      " · ", link(`${sessionHash(sid)}/tasks/${encodeURIComponent(tid)}/profile`, "Profile", { id: "task-profile-link" })]),
  ];
}

/** The status panel; `render(task)` brings it up to date. */
function infoPanel(onCancel) {
  const parts = {
    status: el("span", { id: "task-status", class: "badge" }),
    bar: el("span", { class: "bar-slot" }),
    progress: el("span", { id: "task-progress", class: "big-pct" }),
    subtasks: el("span", { class: "muted" }),
    name: el("dd", { id: "task-name" }),
    start: el("dd", { id: "task-start" }),
    duration: el("dd", { id: "task-duration" }),
    end: el("dd", { id: "task-end" }),
    message: el("p", { id: "task-message", class: "task-message", hidden: true }),
    error: el("div", { id: "task-error", class: "error-text" }),
    traceback: el("pre", { class: "traceback" }),
    cancel: el("button", { type: "button", class: "danger", id: "cancel-task", hidden: true, text: "Cancel task" }),
  };
  parts.cancel.addEventListener("click", onCancel);
  parts.tbDetails = el("details", { class: "traceback-details" }, [el("summary", { text: "Traceback" }), parts.traceback]);
  parts.errorBox = el("div", { class: "error-box", hidden: true }, [parts.error, parts.tbDetails]);
  const panel = el("section", { class: "card task-info" }, [
    el("div", { class: "task-line" }, [parts.status, parts.bar, parts.progress, parts.subtasks, parts.cancel]),
    el("dl", { class: "facts" }, [
      el("dt", { text: "Computes" }), parts.name,
      el("dt", { text: "Started" }), parts.start,
      el("dt", { text: "Duration" }), parts.duration,
      el("dt", { text: "Ended" }), parts.end,
    ]),
    parts.message,
    parts.errorBox,
  ]);
  return { panel, parts };
}

function renderTask(parts, t) {
  parts.status.textContent = t.status;
  parts.status.className = `badge badge-${t.status}`;
  replace(parts.bar, progressBar(t.progress, t.status));
  parts.progress.textContent = fmt.percent(t.progress);
  parts.subtasks.textContent = `${t.n_finished ?? 0} of ${fmt.plural(t.n_subtasks ?? 0, "subtask")} done`;
  parts.name.textContent = t.name || "–";
  parts.start.textContent = fmt.clock(t.start_time);
  parts.start.title = fmt.fullTime(t.start_time);
  parts.duration.textContent = fmt.duration(taskDuration(t));
  parts.end.textContent = t.end_time ? fmt.clock(t.end_time) : "–";
  parts.message.hidden = !t.message;
  parts.message.textContent = t.message || "";
  parts.errorBox.hidden = !t.error;
  parts.error.textContent = t.error || "";
  parts.tbDetails.hidden = !t.error_traceback;
  if (parts.traceback.textContent !== (t.error_traceback || "")) parts.traceback.textContent = t.error_traceback || "";
  parts.cancel.hidden = TERMINAL.has(t.status);
}

/** The graph's toolbar, legend and SVG; `show(graph)` draws a graph API reply. */
function graphPanel(onLevel, onSelect) {
  const view = new GraphView({ onSelect });
  const buttons = ["tileable", "subtask"].map((level) =>
    el("button", { type: "button", class: "level", "data-level": level, "aria-pressed": "false",
      text: level === "tileable" ? "Tileables" : "Subtasks", on: { click: () => onLevel(level) } }));
  const fit = el("button", { type: "button", class: "plain", text: "Fit", title: "fit the whole graph in view",
    on: { click: () => view.fit() } });
  const stats = el("span", { class: "graph-stats muted" });
  const legendSlot = el("div", { class: "legend-slot" });
  const note = el("p", { class: "graph-note muted", hidden: true });
  const box = el("div", { class: "graph-box" }, view.svg);
  const hint = el("p", { class: "hint muted", text: "Scroll to zoom, drag to pan; hover a node for its details, click it to select it." });
  const selection = el("p", { id: "graph-selection", class: "graph-selection", hidden: true });
  const panel = el("section", { class: "card graph-card" }, [
    el("div", { class: "graph-toolbar" }, [el("div", { class: "segmented", role: "group", "aria-label": "graph level" }, buttons),
      legendSlot, stats, fit]),
    note,
    box,
    selection,
    hint,
  ]);
  return { panel, view, buttons, stats, legendSlot, note, box, hint, selection };
}

function stateCounts(nodes) {
  const counts = {};
  for (const n of nodes) counts[n.state] = (counts[n.state] || 0) + 1;
  return counts;
}

function showGraph(g, graph) {
  const shown = graph.nodes.length;
  // an empty graph (before tiling) shows a line instead of an empty box; the box is shown before
  // drawing, so the drawing is fitted to its real width
  g.note.hidden = shown > 0;
  g.box.hidden = g.hint.hidden = shown === 0;
  g.note.textContent = shown ? "" : TERMINAL.has(graph.status) ? "This graph has no nodes."
    : "This graph has no nodes yet: they are known once the task has been tiled.";
  g.view.update(graph);
  const total = graph.n_nodes ?? shown;
  g.stats.textContent = graph.truncated
    ? `showing ${shown} of ${total} nodes`
    : `${fmt.plural(shown, "node")} · ${fmt.plural(graph.edges.length, "edge")}`;
  replace(g.legendSlot, legend(graph.level, stateCounts(graph.nodes)));
}

function fact(name, value, cls = "") {
  return el("span", { class: "fact" }, [el("span", { class: "muted", text: `${name} ` }),
    el("span", { class: cls, text: value })]);
}

/**
 * The details line of the selected node: `node` from the graph reply (null if it is not drawn) and,
 * for a subtask, its task stream `event` (null if the stream has none, e.g. it has not run yet).
 */
function renderSelection(box, id, level, node, event) {
  box.hidden = id === null;
  if (id === null) return replace(box, []);
  box.dataset.id = id;
  box.dataset.op = node ? node.op || node.label || "" : "";
  if (!node) {
    return replace(box, [level === "subtask" ? `Subtask ${id} is not among the nodes drawn of this task's graph.`
      : `Node ${id} is not in this graph.`]);
  }
  const parts = [el("strong", { text: level === "subtask" ? `Subtask ${id}` : node.label || id })];
  if (level === "subtask") parts.push(fact("op", node.op || node.label, "mono sel-op"));
  else parts.push(fact("key", id, "mono"), fact("shape", node.shape ?? "?"));
  parts.push(fact("state", node.state, "sel-state"));
  if (level === "subtask") {
    parts.push(fact("worker", node.worker || (event && event.worker) || "not assigned yet", "mono sel-worker"));
    if (node.stage) parts.push(fact("stage", String(node.stage)));
    if (event) {
      parts.push(fact("chunks", event.keys && event.keys.length ? event.keys.join(", ") : "–", "mono sel-keys"),
        fact("size", fmt.bytes(event.nbytes)), fact("ran", fmt.duration(event.end - event.start)));
    }
  } else if (typeof node.progress === "number") {
    parts.push(fact("done", fmt.percent(node.progress)));
  }
  return replace(box, parts.flatMap((p, i) => (i ? [" · ", p] : [p])));
}

/** A task's page: what it shows, and what it has loaded so far. */
class TaskPage {
  constructor(view, params, ctx) {
    this.sid = params.sid;
    this.tid = params.tid;
    this.ctx = ctx;
    this.path = `/api/sessions/${seg(this.sid)}/tasks/${seg(this.tid)}`;
    // a subtask named by the route is selected, and zoomed into view once it is drawn
    this.selected = params.index ?? null;
    this.level = this.selected !== null ? "subtask" : "tileable";
    this.focusPending = this.selected !== null;
    this.event = null; // the selected subtask's task stream event, once looked up
    this.eventLookup = null; // "<id>|<state>" the lookup was made for
    this.final = { tileable: false, subtask: false }; // drawn after the task ended: nothing more to fetch
    this.seq = 0; // graph requests sent; `drawn` is the newest drawn, older replies are dropped
    this.drawn = 0;
    this.found = false;
    this.info = infoPanel(() => this.cancel());
    this.graph = graphPanel((level) => this.setLevel(level), (node) => this.pick(node.id));
    view.append(...header(this.sid, this.tid), this.info.panel, el("h2", { text: "Graph" }), this.graph.panel);
    this.pressLevel();
    replace(this.graph.legendSlot, legend(this.level));
  }

  pressLevel() {
    for (const b of this.graph.buttons) b.setAttribute("aria-pressed", String(b.dataset.level === this.level));
  }

  async loadGraph(signal) {
    const level = this.level;
    const seq = ++this.seq;
    const graph = await get(`${this.path}/graph?level=${level}`, signal);
    // a reply for a level no longer shown, or older than one already drawn, is dropped
    if (!this.ctx.alive || level !== this.level || seq < this.drawn) return;
    this.drawn = seq;
    showGraph(this.graph, graph);
    if (TERMINAL.has(graph.status)) this.final[level] = true;
    if (this.selected !== null) this.showSelection();
  }

  /** Ring the selected node, zoom to it the first time, and show its details (looking up its stream event). */
  showSelection() {
    const node = this.graph.view.select(this.selected);
    if (node && this.focusPending) this.focusPending = !this.graph.view.focus(this.selected);
    this.renderDetails();
    const lookup = node ? `${this.selected}|${node.state}` : null;
    if (this.level === "subtask" && node && !this.event && lookup !== this.eventLookup) {
      this.eventLookup = lookup; // looked up again only when the subtask's state changes (say, it ran)
      this.ctx.run("stream", (signal) => this.loadEvent(this.selected, signal));
    }
  }

  renderDetails() {
    renderSelection(this.graph.selection, this.selected, this.level, this.graph.view.selectedNode(), this.event);
  }

  async loadEvent(id, signal) {
    const reply = await get(`${this.path}/stream`, signal);
    if (!this.ctx.alive || id !== this.selected) return;
    const mine = (reply.events || []).filter((e) => e.kind === "subtask" && String(e.index) === id);
    this.event = mine.length ? mine[mine.length - 1] : null; // a subtask run again: its last run
    this.renderDetails();
  }

  /** A click selected a node: show it, and at subtask level put it in the address (without a reload). */
  pick(id) {
    this.selected = id;
    this.event = null;
    this.eventLookup = null;
    this.focusPending = false;
    const hash = this.level === "subtask" ? subtaskHash(taskHash(this.sid, this.tid), Number(id)) : taskHash(this.sid, this.tid);
    window.history.replaceState(null, "", hash);
    this.showSelection();
  }

  async loadTask(signal) {
    await findSession(this.sid, signal); // a session that has gone is reported without a 404
    if (!this.found) await checkTaskExists(this.sid, this.tid, signal);
    this.found = true;
    const task = await get(this.path, signal);
    if (this.ctx.alive) renderTask(this.info.parts, task);
  }

  /** One poll: the task, then its graph unless the drawn one is final. */
  async tick(signal) {
    await this.loadTask(signal);
    if (!this.final[this.level]) await this.loadGraph(signal);
    this.ctx.markLoaded();
  }

  setLevel(level) {
    if (level === this.level) return;
    this.level = level;
    this.pressLevel();
    if (this.selected !== null) { // ids differ between the levels: the selection ends
      this.selected = this.event = this.eventLookup = null;
      this.graph.view.select(null);
      this.renderDetails();
      window.history.replaceState(null, "", taskHash(this.sid, this.tid));
    }
    this.graph.view.moved = false; // a new level is fitted into view
    this.ctx.run("graph", (signal) => this.loadGraph(signal));
  }

  cancel() {
    const button = this.info.parts.cancel;
    button.disabled = true;
    button.textContent = "Cancelling…";
    this.ctx.run("cancel", (signal) => post(`${this.path}/cancel`, undefined, signal)).then((ok) => {
      if (ok) return;
      button.disabled = false; // it failed (shown above): let the user try again
      button.textContent = "Cancel task";
    });
  }
}

/** Mount a task's page. */
export function mount(view, params, ctx) {
  const page = new TaskPage(view, params, ctx);
  const onResize = () => {
    if (!page.graph.view.moved) page.graph.view.fit();
  };
  window.addEventListener("resize", onResize);
  ctx.onStop(() => window.removeEventListener("resize", onResize));
  ctx.poll("task", (signal) => page.tick(signal), POLL_MS);
}

// Looked up in the session's task list once, so a wrong task id is reported without a 404.
async function checkTaskExists(sid, tid, signal) {
  const tasks = await get(`/api/sessions/${seg(sid)}/tasks`, signal);
  if (!tasks.some((t) => t.task_id === tid)) {
    throw new ApiError("TaskNotFound", `no task ${JSON.stringify(tid)} in session ${JSON.stringify(sid)}`, 404);
  }
}
