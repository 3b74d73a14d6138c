// The pages of what ran and what it cost: the cluster's performance page (time series of the whole
// cluster, and the task stream of the last minutes), a task's stream, and a worker's charts.

import { get, noteServerTime, seg, serverNow } from "./api.js";
import { el, link } from "./dom.js";
import { FlameGraph } from "./profile.js";
import { SeriesCharts } from "./series.js";
import { StreamView, mergeEvents } from "./stream.js";
import { sessionHash, taskHash } from "./sessions.js";

const POLL_MS = 2000;
// the windows the performance page offers, in seconds
const WINDOWS = [[120, "2 min"], [600, "10 min"], [1800, "30 min"], [3600, "1 h"]];
// the live stream shows what ended in the last this many seconds
const LIVE_STREAM_SECONDS = 120;

function windowPicker(onPick, initial) {
  const select = el("select", { id: "series-window", "aria-label": "time window" },
    WINDOWS.map(([s, label]) => el("option", { value: s, text: `last ${label}`, selected: s === initial })));
  select.addEventListener("change", () => onPick(Number(select.value)));
  return select;
}

function chartsCard(title, charts, extra) {
  return el("section", { class: "card series-card" }, [
    el("div", { class: "section-head" }, [el("h2", { text: title }), extra || null]), charts.box]);
}

function streamCard(title, view, hint) {
  return el("section", { class: "card stream-card" }, [
    el("div", { class: "section-head" }, [el("h2", { text: title })]),
    view.box, el("p", { class: "hint muted", text: hint })]);
}

const taskLink = (e) => (e.session_id && e.task_id ? taskHash(e.session_id, e.task_id) : null);

function followResize(ctx, charts) {
  const onResize = () => charts.resize();
  window.addEventListener("resize", onResize);
  ctx.onStop(() => {
    window.removeEventListener("resize", onResize);
    charts.destroy();
  });
}

/** The cluster's performance page: its time series and its live task stream. */
export function mountPerformance(view, params, ctx) {
  let seconds = 600;
  const charts = new SeriesCharts();
  const stream = new StreamView({ linkTo: taskLink });
  let events = [];
  const picker = windowPicker((s) => { seconds = s; ctx.wakeAll(); }, seconds);
  view.append(
    el("h1", { text: "Performance" }),
    chartsCard("Cluster load", charts, picker),
    streamCard("Task stream (last 2 minutes)", stream,
      "One row per slot; hover a bar for its operator, chunks, sizes and worker; click it to open its task."),
  );
  followResize(ctx, charts);
  ctx.poll("series", async (signal) => {
    const reply = await get(`/api/cluster/series?since=${Math.floor(serverNow() - seconds)}`, signal);
    if (!ctx.alive) return;
    noteServerTime(reply.time);
    charts.update(reply);
    const since = serverNow() - LIVE_STREAM_SECONDS;
    const last = events.length ? events[events.length - 1].start - 5 : since;
    const fresh = await get(`/api/stream?since=${Math.max(since, last).toFixed(3)}`, signal);
    if (!ctx.alive) return;
    events = mergeEvents(events, fresh, since);
    stream.update({ ...fresh, events });
    ctx.markLoaded();
  }, POLL_MS);
}

/** One task's stream, whole, polled while the task runs. */
export function mountTaskStream(view, params, ctx) {
  const { sid, tid } = params;
  const stream = new StreamView({ linkTo: () => taskHash(sid, tid) });
  view.append(
    el("nav", { class: "crumbs" }, [link("#/sessions", "Sessions"), " › ", link(sessionHash(sid), sid, { class: "mono" }),
      " › ", link(taskHash(sid, tid), tid, { class: "mono" }), " › stream"]),
    el("h1", {}, ["Task stream of ", el("span", { class: "mono", text: tid })]),
    streamCard("Task stream", stream, "One row per slot; hover a bar for its operator, chunks, sizes and worker."),
  );
  ctx.poll("stream", async (signal) => {
    const reply = await get(`/api/sessions/${seg(sid)}/tasks/${seg(tid)}/stream`, signal);
    if (!ctx.alive) return;
    noteServerTime(reply.time);
    stream.update(reply);
    ctx.markLoaded();
  }, POLL_MS);
}

/** One task's profile (a flame graph), polled while the page is open: a running task's grows. */
export function mountTaskProfile(view, params, ctx) {
  const { sid, tid } = params;
  const graph = new FlameGraph();
  view.append(
    el("nav", { class: "crumbs" }, [link("#/sessions", "Sessions"), " › ", link(sessionHash(sid), sid, { class: "mono" }),
      " › ", link(taskHash(sid, tid), tid, { class: "mono" }), " › profile"]),
    el("h1", {}, ["Profile of ", el("span", { class: "mono", text: tid })]),
    el("section", { class: "card profile-card", id: "task-profile" }, graph.box),
  );
  ctx.poll("profile", async (signal) => {
    const reply = await get(`/api/sessions/${seg(sid)}/tasks/${seg(tid)}/profile`, signal);
    if (!ctx.alive) return;
    noteServerTime(reply.time);
    graph.update(reply);
    ctx.markLoaded();
  }, POLL_MS);
}

/** A worker's charts, for its page (node.js): returns the card; its poll runs on `ctx`. */
export function workerCharts(address, ctx) {
  const charts = new SeriesCharts();
  followResize(ctx, charts);
  ctx.poll("series", async (signal) => {
    const reply = await get(`/api/cluster/workers/${seg(address)}/series?since=${Math.floor(serverNow() - 600)}`, signal);
    if (ctx.alive) charts.update(reply);
  }, POLL_MS);
  return chartsCard("Load (last 10 min)", charts);
}
