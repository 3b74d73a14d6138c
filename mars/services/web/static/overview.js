// The cluster overview: supervisors and workers, refreshed every second from GET /api/cluster.

import { get, noteServerTime, seg } from "./api.js";
import { badge, el, emptyRow, link, meter, nodeCell, syncRows, table, textCell } from "./dom.js";
import * as fmt from "./format.js";

const POLL_MS = 1000;

/** Route of a worker's or supervisor's page. */
export function nodeHash(kind, address) {
  return `#/${kind}/${seg(address)}`;
}

/** The CPU cell: a bar from 0 to n_cpu and "busy / n_cpu". */
export function cpuMeter(busy, nCpu) {
  const text = fmt.cores(busy, nCpu);
  const title = busy === null || busy === undefined ? "no usage reported yet" : `${text} cores busy`;
  return meter(busy, nCpu, text, title);
}

/** The memory cell: a bar of used against the limit and "used / limit". */
export function memoryMeter(used, limit) {
  return meter(used, limit, fmt.usedOf(used, limit), limit ? `${fmt.percent(used / limit)} of the limit` : "");
}

/** The storage of a worker: bytes in memory and on disk, and its chunk count. */
export function storageText(w) {
  if (w.storage_memory_bytes === undefined && w.storage_disk_bytes === undefined) return null;
  const mem = fmt.bytes(w.storage_memory_bytes);
  const disk = fmt.bytes(w.storage_disk_bytes);
  return { main: `${mem} memory · ${disk} disk`, chunks: fmt.plural(w.storage_n_chunks ?? 0, "chunk") };
}

// the state cell holds only the word, so it reads "alive" or "lost"; when it was lost is in the heartbeat cell
function stateCell(w) {
  return nodeCell(w.state === "lost" ? "state lost" : "state", w.state, () => badge(w.state));
}

function heartbeatCell(w, now) {
  if (w.state !== "lost") return textCell("heartbeat", fmt.ago(w.last_heartbeat, now), fmt.fullTime(w.last_heartbeat));
  const lostAt = w.lost_at ?? w.last_heartbeat;
  const title = `lost at ${fmt.fullTime(lostAt)}; last heartbeat ${fmt.ago(w.last_heartbeat, now)}`;
  return textCell("heartbeat", `lost ${fmt.ago(lostAt, now)}`, title);
}

function slotsText(w) {
  if (w.execution_n_slots === undefined || w.execution_n_slots === null) return fmt.plural(w.n_slots ?? 0, "slot");
  const queued = w.execution_n_queued ? ` · ${w.execution_n_queued} queued` : "";
  return `${w.execution_n_running} of ${fmt.plural(w.execution_n_slots, "slot")} busy${queued}`;
}

function workerCells(w, now) {
  const storage = storageText(w);
  return [
    nodeCell("address", w.address, () => link(nodeHash("workers", w.address), w.address)),
    textCell("host", `${w.hostname ?? "–"} · pid ${w.pid ?? "–"}`),
    stateCell(w),
    textCell("slots", slotsText(w)),
    nodeCell("cpu", `${w.cpu_usage}|${w.n_cpu}`, () => cpuMeter(w.cpu_usage, w.n_cpu)),
    nodeCell("memory", `${w.memory_used}|${w.memory_limit}`, () => memoryMeter(w.memory_used, w.memory_limit)),
    nodeCell("storage", storage ? `${storage.main}|${storage.chunks}` : "-", () =>
      storage ? [storage.main, el("span", { class: "muted small block", text: storage.chunks })] : "–",
    ),
    heartbeatCell(w, now),
  ];
}

function supervisorCells(s, now) {
  return [
    nodeCell("address", s.address, () => link(nodeHash("supervisors", s.address), s.address)),
    textCell("host", s.state === "alive" ? `${s.hostname ?? "–"} · pid ${s.pid ?? "–"}` : "–"),
    nodeCell("state", `${s.state}|${s.error}`, () => [
      badge(s.state),
      s.error ? el("span", { class: "muted small block", text: s.error }) : null,
    ]),
    nodeCell("cpu", `${s.cpu_usage}|${s.n_cpu}`, () => cpuMeter(s.cpu_usage, s.n_cpu)),
    nodeCell("memory", `${s.memory_used}|${s.memory_total}`, () => memoryMeter(s.memory_used, s.memory_total)),
    textCell("sessions", s.n_sessions ?? "–"),
    textCell("started", s.started ? `${fmt.duration(now - s.started)} ago` : "–", fmt.fullTime(s.started)),
  ];
}

// alive workers first (in the API's order), then the lost ones, most recently lost first
function orderWorkers(workers) {
  const alive = workers.filter((w) => w.state !== "lost");
  const lost = workers.filter((w) => w.state === "lost").sort((a, b) => (b.lost_at || 0) - (a.lost_at || 0));
  return alive.concat(lost);
}

function summary(data) {
  const counts = data.n_workers || {};
  const parts = [
    fmt.plural(data.supervisors.length, "supervisor"),
    `${fmt.plural(counts.alive ?? 0, "worker")} alive`,
  ];
  if (counts.lost) parts.push(`${counts.lost} lost`);
  const alive = data.workers.filter((w) => w.state === "alive");
  const cpus = alive.reduce((sum, w) => sum + (w.n_cpu || 0), 0);
  const busy = alive.reduce((sum, w) => sum + (w.cpu_usage || 0), 0);
  parts.push(`${busy.toFixed(2)} of ${cpus} worker cores busy`);
  return parts.join(" · ");
}

/** Mount the overview page on `view`. */
export function mount(view, params, ctx) {
  const sup = table("supervisors", ["Address", "Host", "State", "CPU", "Memory", "Sessions", "Started"]);
  const wrk = table("workers", ["Address", "Host", "State", "Slots", "CPU", "Memory", "Storage", "Heartbeat"]);
  const line = el("p", { class: "summary muted" });
  view.append(
    el("h1", { text: "Cluster" }),
    line,
    el("h2", { text: "Supervisors" }),
    el("div", { class: "table-wrap" }, sup.table),
    el("h2", { text: "Workers" }),
    el("div", { class: "table-wrap" }, wrk.table),
  );
  ctx.poll("cluster", async (signal) => {
    const data = await get("/api/cluster", signal);
    if (!ctx.alive) return;
    noteServerTime(data.time);
    const now = data.time;
    line.textContent = summary(data);
    syncRows(sup.tbody, data.supervisors, "data-supervisor", (s) => s.address, (s) => supervisorCells(s, now),
      (s) => (s.state === "alive" ? "" : "lost"));
    emptyRow(sup.tbody, 7, "No supervisor answered.");
    syncRows(wrk.tbody, orderWorkers(data.workers), "data-worker", (w) => w.address, (w) => workerCells(w, now),
      (w) => (w.state === "lost" ? "lost" : ""));
    emptyRow(wrk.tbody, 8, "No worker has joined yet: start one with mars-worker -s <supervisor address>.");
    ctx.markLoaded();
  }, POLL_MS);
}
