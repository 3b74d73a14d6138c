// The sessions list, and one session's tasks.

import { ApiError, get, seg, serverNow } from "./api.js";
import { badge, el, emptyRow, link, nodeCell, progressBar, syncRows, table, textCell } from "./dom.js";
import * as fmt from "./format.js";

const POLL_MS = 1000;
const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/** Route of a session's page. */
export function sessionHash(sid) {
  return `#/sessions/${seg(sid)}`;
}

/** Route of a task's page. */
export function taskHash(sid, tid) {
  return `#/sessions/${seg(sid)}/tasks/${seg(tid)}`;
}

/**
 * The session `sid` from the sessions list, or an ApiError like the API's 404.
 * Pages look the session up in the list rather than asking for it by id, so a
 * session that has gone is reported without a failed request in the console.
 */
export async function findSession(sid, signal) {
  const all = await get("/api/sessions", signal);
  const found = all.find((s) => s.session_id === sid);
  if (!found) {
    throw new ApiError("SessionNotFound", `no session ${JSON.stringify(sid)} on this cluster (closed, or never made)`, 404);
  }
  return found;
}

/** Seconds a task has run: to its end, or to now while it runs. */
export function taskDuration(t) {
  if (t.start_time === null || t.start_time === undefined) return null;
  const end = t.end_time ?? (TERMINAL.has(t.status) ? t.start_time : serverNow());
  return end - t.start_time;
}

// ---------------------------------------------------------------- sessions list
function sessionCells(s, now) {
  const closed = s.state === "closed";
  return [
    nodeCell("session", s.session_id, () => link(sessionHash(s.session_id), s.session_id, { class: "mono" })),
    nodeCell("state", `${s.state}|${s.closed}`, () => badge(closed ? "closed" : "open", "",
      closed ? `closed ${fmt.ago(s.closed, now)}: its tasks are kept, its data is gone` : "")),
    textCell("tasks", s.n_tasks ?? "–"),
    textCell("chunks", s.n_chunks ?? "–"),
    textCell("supervisor", s.supervisor ?? "–"),
    textCell("created", fmt.ago(s.created, now), fmt.fullTime(s.created)),
  ];
}

/** Mount the sessions page: open sessions, then recently closed ones; newest first within each. */
export function mountSessions(view, params, ctx) {
  const t = table("sessions", ["Session", "State", "Tasks", "Stored chunks", "Supervisor", "Created"]);
  view.append(el("h1", { text: "Sessions" }), el("div", { class: "table-wrap" }, t.table));
  ctx.poll("sessions", async (signal) => {
    const all = await get("/api/sessions", signal);
    if (!ctx.alive) return;
    const now = serverNow();
    const open = (s) => (s.state === "closed" ? 1 : 0);
    const sorted = all.slice().sort((a, b) => open(a) - open(b) || (b.created || 0) - (a.created || 0));
    syncRows(t.tbody, sorted, "data-session", (s) => s.session_id, (s) => sessionCells(s, now),
      (s) => (s.state === "closed" ? "session-closed" : ""));
    emptyRow(t.tbody, 6, "No session yet. Connect with mars.new_session(url) to start one.");
    ctx.markLoaded();
  }, POLL_MS);
}

// ---------------------------------------------------------------- one session's tasks
function taskCells(sid, t, index) {
  const pct = fmt.percent(t.progress);
  const done = `${t.n_finished ?? 0} / ${t.n_subtasks ?? 0}`;
  return [
    textCell("index", index + 1),
    nodeCell("task", `${t.task_id}|${t.name}`, () => link(taskHash(sid, t.task_id), t.name || t.task_id,
      { class: t.name ? "" : "mono", title: `task ${t.task_id}` })),
    // the message (why it cannot progress) is the status's hover text: td.error holds errors only
    nodeCell("status", `${t.status}|${t.message}`, () => badge(t.status, t.message ? "has-message" : "", t.message)),
    nodeCell("progress", `${t.progress}|${t.status}`, () => [progressBar(t.progress, t.status), el("span", { class: "pct", text: pct })]),
    textCell("subtasks", done),
    textCell("start", fmt.clock(t.start_time), fmt.fullTime(t.start_time)),
    textCell("duration", fmt.duration(taskDuration(t))),
    textCell("error", t.error || "", t.error || ""),
  ];
}

function sessionHeader(s) {
  return [
    el("nav", { class: "crumbs" }, [link("#/sessions", "Sessions"), " › ", el("span", { class: "mono", text: s })]),
    el("h1", {}, ["Session ", el("span", { class: "mono", text: s })]),
  ];
}

/** Mount a session's page: its tasks, newest first. */
export function mountSession(view, params, ctx) {
  const sid = params.sid;
  const t = table("tasks", ["#", "Task", "Status", "Progress", "Subtasks", "Start", "Duration", "Error"]);
  const about = el("p", { class: "summary muted" });
  view.append(...sessionHeader(sid), about, el("div", { class: "table-wrap" }, t.table));
  ctx.poll("tasks", async (signal) => {
    const session = await findSession(sid, signal);
    const tasks = await get(`/api/sessions/${seg(sid)}/tasks`, signal);
    if (!ctx.alive) return;
    const closed = session.state === "closed" ? ` · closed ${fmt.ago(session.closed, serverNow())}: its data is gone` : "";
    about.textContent = `${fmt.plural(tasks.length, "task")} · created ${fmt.ago(session.created, serverNow())} on ${session.supervisor}${closed}`;
    const numbered = tasks.map((task, i) => ({ task, i })).reverse();
    syncRows(t.tbody, numbered, "data-task", (x) => x.task.task_id, (x) => taskCells(sid, x.task, x.i),
      (x) => `task-${x.task.status}`);
    emptyRow(t.tbody, 8, "No task has been submitted in this session yet.");
    ctx.markLoaded();
  }, POLL_MS);
}
