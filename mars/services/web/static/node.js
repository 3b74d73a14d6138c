// A worker's or a supervisor's page: its figures, its recent logs (polled), its threads' stacks (on demand).

import { ApiError, get, noteServerTime, seg, serverNow } from "./api.js";
import { append, badge, el, link } from "./dom.js";
import * as fmt from "./format.js";
import { LogView, renderStacks } from "./logs.js";
import { cpuMeter, memoryMeter, storageText } from "./overview.js";
import { workerCharts } from "./perf.js";

const POLL_MS = 2000;
const LOG_LIMIT = 500;

/** A fact of the info panel: label, a signature of what it shows, and how to build it. */
function fact(label, value, title) {
  const text = value === null || value === undefined || value === "" ? "–" : String(value);
  return { label, sig: `${text}|${title || ""}`, build: () => el("span", { text, title: title || null }) };
}

function nodeFact(label, sig, build) {
  return { label, sig: String(sig), build };
}

/** Bring a <dl> in line with `facts`, rebuilding only the values that changed. */
function syncFacts(dl, facts) {
  if (dl.children.length !== facts.length * 2) {
    dl.replaceChildren(...facts.flatMap((f) => [el("dt", { text: f.label }), el("dd")]));
  }
  facts.forEach((f, i) => {
    const dt = dl.children[2 * i];
    const dd = dl.children[2 * i + 1];
    if (dt.textContent !== f.label) dt.textContent = f.label;
    if (dd._sig === f.sig) return;
    dd._sig = f.sig;
    dd.replaceChildren();
    append(dd, f.build());
  });
}

function startedText(n, now) {
  if (!n.started) return null;
  return n.state === "alive" ? `${fmt.clock(n.started)} (up ${fmt.duration(now - n.started)})` : fmt.clock(n.started);
}

function commonFacts(n, now) {
  return [
    nodeFact("State", `${n.state}|${n.lost_at}`, () => [
      badge(n.state),
      n.lost_at ? el("span", { class: "muted", text: ` since ${fmt.clock(n.lost_at)} (${fmt.ago(n.lost_at, now)})` }) : null,
    ]),
    fact("Host", n.hostname),
    fact("PID", n.pid),
    fact("Started", startedText(n, now), fmt.fullTime(n.started)),
    nodeFact("CPU", `${n.cpu_usage}|${n.n_cpu}`, () => cpuMeter(n.cpu_usage, n.n_cpu)),
  ];
}

function workerFacts(w, now) {
  const storage = storageText(w);
  const slots = w.execution_n_slots === undefined ? fmt.plural(w.n_slots ?? 0, "slot") :
    `${fmt.plural(w.execution_n_slots, "slot")}: ${w.execution_n_running} running, ${w.execution_n_queued} queued, ` +
    `${w.execution_n_free_slots} free`;
  return [
    ...commonFacts(w, now),
    nodeFact("Memory", `${w.memory_used}|${w.memory_limit}`, () => memoryMeter(w.memory_used, w.memory_limit)),
    fact("Slots", slots),
    fact("Storage", storage ? `${storage.main} (${storage.chunks})` : null),
    fact("Last heartbeat", fmt.ago(w.last_heartbeat, now), fmt.fullTime(w.last_heartbeat)),
    fact("Slot processes", (w.slot_addresses || []).join(", ") || null),
    fact("I/O processes", (w.io_addresses || []).join(", ") || null),
    fact("CUDA devices", (w.cuda_devices || []).join(", ") || "none"),
    ...(w.gpus || []).map((g) => nodeFact(`GPU ${g.index}`, `${g.memory_used}|${g.memory_total}|${g.utilization}`,
      () => gpuFact(g))),
  ];
}

function gpuFact(g) {
  // a device's memory as a meter, its name and utilisation beside it
  const box = memoryMeter(g.memory_used, g.memory_total);
  box.append(` ${g.name}, ${g.utilization}% busy`);
  return box;
}

function supervisorFacts(s, now) {
  return [
    ...commonFacts(s, now),
    nodeFact("Memory", `${s.memory_used}|${s.memory_total}`, () => memoryMeter(s.memory_used, s.memory_total)),
    fact("Sessions", s.n_sessions),
    ...(s.error ? [fact("Error", s.error)] : []),
  ];
}

// Looked up in a list rather than by address, so a node that is gone shows a message, not a 404.
async function findWorker(address, signal) {
  const workers = await get("/api/cluster/workers", signal);
  const found = workers.find((w) => w.address === address);
  if (!found) throw new ApiError("NodeNotFound", `no worker ${address} in this cluster (it never joined, or was forgotten)`, 404);
  return found;
}

async function findSupervisor(address, signal) {
  const cluster = await get("/api/cluster", signal);
  noteServerTime(cluster.time);
  const found = cluster.supervisors.find((s) => s.address === address);
  if (!found) throw new ApiError("NodeNotFound", `no supervisor ${address} in this cluster`, 404);
  return found;
}

function header(kind, address) {
  const title = kind === "workers" ? "Worker" : "Supervisor";
  return [
    el("nav", { class: "crumbs" }, [link("#/", "Cluster"), " › ", el("span", { text: `${title.toLowerCase()} ${address}` })]),
    el("h1", {}, [`${title} `, el("span", { class: "mono", text: address })]),
  ];
}

function stacksSection() {
  const button = el("button", { type: "button", id: "refresh-stacks", text: "Refresh stacks" });
  const taken = el("span", { class: "muted stacks-time" });
  const expand = el("button", { type: "button", class: "plain", text: "Expand all" });
  const stacks = el("div", { id: "stacks" }, el("p", { class: "muted", text: "Loading stacks…" }));
  expand.addEventListener("click", () => {
    const open = expand.textContent === "Expand all";
    for (const d of stacks.querySelectorAll("details.thread")) d.open = open;
    expand.textContent = open ? "Collapse all" : "Expand all";
  });
  const section = el("section", { class: "card" }, [
    el("div", { class: "section-head" }, [el("h2", { text: "Thread stacks" }), taken, expand, button]),
    stacks,
  ]);
  return { section, button, taken, stacks };
}

/** A worker's or supervisor's page; `kind` is "workers" or "supervisors", as in the API's paths. */
class NodePage {
  constructor(view, address, kind, ctx) {
    this.address = address;
    this.kind = kind;
    this.ctx = ctx;
    this.base = `/api/cluster/${kind}/${seg(address)}`;
    this.node = null;
    this.stacksLoaded = false;
    this.info = el("dl", { class: "facts" });
    this.logs = new LogView(LOG_LIMIT);
    this.stacks = stacksSection();
    this.stacks.button.addEventListener("click", () => ctx.run("stacks", (signal) => this.loadStacks(signal)));
    view.append(...header(kind, address), el("section", { id: "node-info", class: "card" }, this.info),
      ...(kind === "workers" ? [workerCharts(address, ctx)] : []), this.logs.section, this.stacks.section);
  }

  /** Why the node's logs and stacks cannot be asked for, or null when they can. */
  unreadable() {
    if (this.node && this.node.state === "alive") return null;
    const what = this.kind === "workers" ? "worker" : "supervisor";
    return `This ${what} is ${this.node ? this.node.state : "unknown"}: its logs and stacks cannot be read.`;
  }

  async loadStacks(signal) {
    const why = this.unreadable();
    if (why) return renderStacks(this.stacks.stacks, null, why);
    this.stacks.button.disabled = true;
    try {
      const data = await get(`${this.base}/stacks`, signal);
      if (!this.ctx.alive) return;
      noteServerTime(data.time);
      this.stacks.taken.textContent = `taken at ${fmt.clock(data.time)}`;
      renderStacks(this.stacks.stacks, data, null);
    } finally {
      this.stacks.button.disabled = Boolean(this.unreadable());
    }
  }

  async loadLogs(signal) {
    const why = this.unreadable();
    if (why) return this.logs.unavailable(why);
    const data = await get(`${this.base}/logs?limit=${LOG_LIMIT}`, signal);
    if (this.ctx.alive) this.logs.update(data);
  }

  /** One poll: the node's figures, its new log records, and its stacks the first time. */
  async tick(signal) {
    const workers = this.kind === "workers";
    const node = workers ? await findWorker(this.address, signal) : await findSupervisor(this.address, signal);
    if (!this.ctx.alive) return;
    this.node = node;
    const now = serverNow();
    syncFacts(this.info, workers ? workerFacts(node, now) : supervisorFacts(node, now));
    // a lost node's figures are its last report: shown greyed; its stacks cannot be asked for
    this.info.classList.toggle("stale", node.state !== "alive");
    this.stacks.button.disabled = node.state !== "alive";
    await this.ctx.run("logs", (s) => this.loadLogs(s));
    if (!this.stacksLoaded) {
      this.stacksLoaded = true; // stacks are not polled: the button asks again
      await this.ctx.run("stacks", (s) => this.loadStacks(s));
    }
    this.ctx.markLoaded();
  }
}

function mountNode(view, address, kind, ctx) {
  const page = new NodePage(view, address, kind, ctx);
  ctx.poll("info", (signal) => page.tick(signal), POLL_MS);
}

/** Mount a worker's page. */
export function mountWorker(view, params, ctx) {
  mountNode(view, params.address, "workers", ctx);
}

/** Mount a supervisor's page. */
export function mountSupervisor(view, params, ctx) {
  mountNode(view, params.address, "supervisors", ctx);
}
