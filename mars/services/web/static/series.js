// Time series charts of a worker's or the cluster's load, drawn with uPlot (vendor/uPlot.iife.min.js,
// loaded as a classic script before the modules: it defines the global `uPlot`).
//
// SeriesCharts draws a series API reply (docs/web-api.md, "Time series") as three charts: CPU (cores
// busy), memory (in chunks, in the processes otherwise, spilled to disk) and network (bytes received
// and sent per second). Each chart's box has data-chart, data-points and data-max-FIELD, which the
// tests read. It imports only dom.js and format.js, so the performance report can inline it.

import { el, replace } from "./dom.js";
import * as fmt from "./format.js";

const CHARTS = [
  { name: "cpu", title: "CPU (cores busy)", fields: [["cpu", "cores busy", "#1f77b4"]], unit: "cores" },
  { name: "memory", title: "Memory", unit: "bytes", fields: [
    ["memory_chunks", "chunks in memory", "#2ca02c"], ["memory_other", "processes otherwise", "#9467bd"],
    ["spilled", "spilled to disk", "#8c564b"]] },
  { name: "network", title: "Network (per second)", unit: "bytes", fields: [
    ["bytes_received", "received", "#ff7f0e"], ["bytes_sent", "sent", "#17becf"]] },
];

function axisValues(unit) {
  return (u, values) => values.map((v) => (unit === "bytes" ? fmt.bytes(v) : Number(v).toFixed(1)));
}

function options(chart, width) {
  return {
    width, height: 170,
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(max, chart.unit === "cores" ? 1 : 1024)] } },
    axes: [{}, { values: axisValues(chart.unit), size: 70 }],
    series: [{}, ...chart.fields.map(([, label, stroke]) => ({
      label, stroke, width: 1.5, fill: `${stroke}22`,
      value: (u, v) => (v === null || v === undefined ? "–" : chart.unit === "bytes" ? fmt.bytes(v) : v.toFixed(2)),
    }))],
    legend: { live: true },
  };
}

/** Three uPlot charts in `this.box`; `update(reply)` gives them new data. */
export class SeriesCharts {
  constructor({ width = null } = {}) {
    this.fixedWidth = width;
    this.plots = new Map(); // chart name -> uPlot
    this.boxes = new Map();
    this.note = el("p", { class: "muted series-note", hidden: true });
    this.box = el("div", { class: "series" }, [this.note]);
    for (const chart of CHARTS) {
      const box = el("div", { class: "chart", "data-chart": chart.name, "data-points": "0" }, el("h3", { text: chart.title }));
      this.boxes.set(chart.name, box);
      this.box.append(box);
    }
  }

  width() {
    return this.fixedWidth || Math.max(360, Math.min(1200, (this.box.clientWidth || 900) - 8));
  }

  update(reply) {
    const cols = reply.columns || {};
    const time = cols.time || [];
    this.note.hidden = time.length > 0;
    this.note.textContent = time.length ? "" : "No samples yet: workers report once a second.";
    const uPlot = globalThis.uPlot;
    if (!uPlot) throw new Error("the uPlot library did not load (static/vendor/uPlot.iife.min.js)");
    for (const chart of CHARTS) {
      const data = [time, ...chart.fields.map(([field]) => cols[field] || [])];
      const box = this.boxes.get(chart.name);
      box.dataset.points = String(time.length);
      for (const [field] of chart.fields) {
        const values = (cols[field] || []).filter((v) => v !== null);
        box.dataset[`max_${field}`.replace(/_([a-z])/g, (m, c) => c.toUpperCase())] = String(values.length ? Math.max(...values) : 0);
      }
      let plot = this.plots.get(chart.name);
      if (!plot) {
        const target = el("div", { class: "plot" });
        box.append(target);
        plot = new uPlot(options(chart, this.width()), data, target);
        this.plots.set(chart.name, plot);
      } else {
        plot.setData(data);
      }
    }
  }

  /** Fit the charts to their box's width (after a resize). */
  resize() {
    for (const plot of this.plots.values()) plot.setSize({ width: this.width(), height: 170 });
  }

  destroy() {
    for (const plot of this.plots.values()) plot.destroy();
    this.plots.clear();
    replace(this.box, []);
  }
}
