// The page of a performance report (mars.performance_report): a file that opens with no server and
// no network. mars/services/web/report.py inlines this module with the ones it imports, uPlot and the
// styles, and the data as JSON; showReport(data) builds the page from it.

import { el } from "./dom.js";
import * as fmt from "./format.js";
import { GraphView } from "./graphview.js";
import { FlameGraph } from "./profile.js";
import { SeriesCharts } from "./series.js";
import { StreamView } from "./stream.js";

const WIDTH = 1180;

function summary(data) {
  const tasks = data.tasks || [];
  const events = (data.stream && data.stream.events) || [];
  const subtasks = events.filter((e) => e.kind === "subtask");
  const busy = subtasks.reduce((s, e) => s + (e.end - e.start), 0);
  const facts = [
    ["Cluster", data.cluster || "–"],
    ["Recorded", `${fmt.fullTime(data.start)} for ${fmt.duration(data.end - data.start)}`],
    ["Tasks", String(tasks.length)],
    ["Subtasks run", `${subtasks.length} (${fmt.duration(busy)} of slot time)`],
    ["Transfers", `${events.filter((e) => e.kind === "transfer").length}, ` +
      fmt.bytes(events.filter((e) => e.kind === "transfer").reduce((s, e) => s + e.nbytes, 0))],
    ["Spills", `${events.filter((e) => e.kind === "spill").length}`],
  ];
  return el("section", { class: "card" }, el("dl", { class: "facts", id: "report-summary" },
    facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])));
}

function taskSection(task) {
  const graph = new GraphView();
  const box = el("div", { class: "graph-box" }, graph.svg);
  const flame = new FlameGraph({ width: WIDTH - 40 });
  const section = el("section", { class: "card report-task", "data-task": task.task_id }, [
    el("h3", {}, [task.name || "task", " ", el("span", { class: "mono muted", text: task.task_id })]),
    el("p", { class: "muted", text: `${task.status} · ${fmt.plural(task.n_subtasks || 0, "subtask")} · ` +
      fmt.duration(task.end_time && task.start_time ? task.end_time - task.start_time : null) }),
    task.error ? el("p", { class: "error-text", text: task.error }) : null,
    box,
    el("h4", { text: "Profile" }),
    el("div", { class: "report-profile" }, flame.box),
  ]);
  const draw = () => {
    if (task.graph) { graph.update(task.graph); graph.fit(); }
    flame.update(task.profile || { frames: [], rows: [], samples: 0, interval: 0.01 });
  };
  return { section, draw };
}

/** Build the report's page in document.body from `data` (see report.py for its shape). */
export function showReport(data) {
  const main = el("main", { id: "view", "data-page": "report" });
  document.body.append(main);
  const stream = new StreamView({ width: WIDTH });
  const charts = new SeriesCharts({ width: WIDTH });
  const tasks = (data.tasks || []).map(taskSection);
  main.append(
    el("h1", { text: data.title || "Mars performance report" }),
    summary(data),
    el("h2", { text: "Task stream" }),
    el("section", { class: "card stream-card", id: "report-stream" }, stream.box),
    el("h2", { text: "Cluster load" }),
    el("section", { class: "card series-card", id: "report-series" }, charts.box),
    el("h2", { text: "Task graphs and profiles" }),
    ...tasks.map((t) => t.section),
  );
  stream.update(data.stream || { events: [], workers: [] });
  charts.update(data.series || { columns: {} });
  for (const t of tasks) t.draw();
  main.dataset.loaded = "true";
}
