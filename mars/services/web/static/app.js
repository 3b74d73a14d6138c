// The dashboard's shell: hash routing, and the life of a page (polling, errors, loaded flag).
//
// A page module exports mount(view, params, ctx). `ctx` runs its polls and shows
// its failures; on a route change ctx.stop() ends them, so a late reply of the
// old page never touches the new one.

import { initToken } from "./api.js";
import { el, link, replace } from "./dom.js";
import * as overview from "./overview.js";
import * as sessions from "./sessions.js";
import * as task from "./task.js";
import * as node from "./node.js";
import * as perf from "./perf.js";

/** Routes: a pattern over the hash's path segments, the page name and its module's mount. */
const ROUTES = [
  { parts: [], page: "overview", mount: overview.mount },
  { parts: ["sessions"], page: "sessions", mount: sessions.mountSessions },
  { parts: ["sessions", ":sid"], page: "session", mount: sessions.mountSession },
  { parts: ["sessions", ":sid", "tasks", ":tid"], page: "task", mount: task.mount },
  { parts: ["sessions", ":sid", "tasks", ":tid", "subtasks", ":index"], page: "task", mount: task.mount },
  { parts: ["sessions", ":sid", "tasks", ":tid", "stream"], page: "stream", mount: perf.mountTaskStream },
  { parts: ["sessions", ":sid", "tasks", ":tid", "profile"], page: "profile", mount: perf.mountTaskProfile },
  { parts: ["performance"], page: "performance", mount: perf.mountPerformance },
  { parts: ["workers", ":address"], page: "worker", mount: node.mountWorker },
  { parts: ["supervisors", ":address"], page: "supervisor", mount: node.mountSupervisor },
];

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // a stray "%" in a hand-typed URL: use it as it is
  }
}

/** Match the location's hash to a route: {route, params} or null. */
export function resolve(hash) {
  const path = hash.replace(/^#/, "").split("?")[0];
  const parts = path.split("/").filter((p) => p !== "");
  for (const route of ROUTES) {
    if (route.parts.length !== parts.length) continue;
    const params = {};
    const ok = route.parts.every((want, i) => {
      if (want.startsWith(":")) {
        params[want.slice(1)] = decode(parts[i]);
        return true;
      }
      return want === parts[i];
    });
    if (ok) return { route, params };
  }
  return null;
}

/** One mounted page's polls, errors and "loaded" mark. */
export class PageContext {
  constructor(view) {
    this.view = view;
    this.alive = true;
    this.errors = new Map(); // poll name -> ApiError shown in .api-error
    this.controller = new AbortController();
    this.wakers = new Set();
    this.cleanups = [];
    this.onVisible = () => this.wakeAll();
    document.addEventListener("visibilitychange", this.onVisible);
  }

  get signal() {
    return this.controller.signal;
  }

  /** Mark the page as showing data (data-loaded="true"), once its first call succeeded. */
  markLoaded() {
    if (this.alive) this.view.dataset.loaded = "true";
  }

  /**
   * Run `fn(signal)` now and then `intervalMs` after each run ends, while the
   * page is mounted (and paused while the tab is hidden). A failure is shown
   * under `name` and cleared by that poll's next success.
   */
  poll(name, fn, intervalMs) {
    const loop = async () => {
      while (this.alive) {
        await this.run(name, fn);
        await this.sleep(intervalMs);
        while (this.alive && document.hidden) await this.sleep(60000);
      }
    };
    loop().catch(() => {}); // run() catches everything; this only guards against the impossible
  }

  /** Run `fn(signal)` once, showing a failure under `name`; resolves to whether it succeeded. */
  async run(name, fn) {
    try {
      await fn(this.signal);
      if (!this.alive) return false;
      this.setError(name, null);
      return true;
    } catch (e) {
      if (this.alive) this.setError(name, e);
      return false;
    }
  }

  /** Show (or with null, clear) the failure of one of the page's calls. */
  setError(name, error) {
    if (error) this.errors.set(name, error);
    else if (!this.errors.delete(name)) return;
    this.renderErrors();
  }

  renderErrors() {
    let box = this.view.querySelector(":scope > .api-error");
    if (!this.errors.size) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = el("div", { class: "api-error", role: "alert" });
      this.view.prepend(box);
    }
    const unreachable = Array.from(this.errors.values()).some((e) => e && e.unreachable);
    box.classList.toggle("unreachable", unreachable);
    const messages = new Set(Array.from(this.errors.values()).map(messageOf));
    replace(box, Array.from(messages).map((m) => el("div", { class: "api-error-message", text: m })));
  }

  sleep(ms) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  wakeAll() {
    for (const wake of Array.from(this.wakers)) wake();
  }

  /** Call `fn` when the page ends (to drop window listeners, say). */
  onStop(fn) {
    this.cleanups.push(fn);
  }

  /** End the page: its polls stop and its calls in flight are abandoned. */
  stop() {
    this.alive = false;
    for (const fn of this.cleanups.splice(0)) {
      try {
        fn();
      } catch {
        /* the page is going away: nothing to show it on */
      }
    }
    this.controller.abort();
    document.removeEventListener("visibilitychange", this.onVisible);
    this.wakeAll();
  }
}

function messageOf(error) {
  if (error && typeof error.message === "string" && error.message) return error.message;
  return String(error);
}

let current = null;

function notFound(view, hash) {
  replace(view, [
    el("h1", { text: "Page not found" }),
    el("p", {}, [`Nothing is shown at "${hash}". Go to the `, link("#/", "cluster overview"), " or the ", link("#/sessions", "sessions"), "."]),
  ]);
}

function highlightNav(page) {
  const section = ["sessions", "session", "task", "stream", "profile"].includes(page) ? "#/sessions"
    : page === "performance" ? "#/performance" : "#/";
  for (const a of document.querySelectorAll("nav.main-nav a")) {
    if (a.getAttribute("href") === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

/** Show the page the location's hash names, ending the previous one. */
export function route() {
  const view = document.getElementById("view");
  if (current) current.stop();
  const match = resolve(window.location.hash);
  const page = match ? match.route.page : "notfound";
  view.replaceChildren();
  view.removeAttribute("data-loaded");
  view.dataset.page = page;
  highlightNav(page);
  current = new PageContext(view);
  if (!match) {
    notFound(view, window.location.hash);
    current.markLoaded();
    return;
  }
  try {
    match.route.mount(view, match.params, current);
  } catch (e) {
    current.setError("mount", e);
  }
}

function start() {
  initToken();
  window.addEventListener("hashchange", route);
  // a promise rejection nobody handled would reach the console: show it on the page instead
  window.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    if (current) current.setError("unhandled", event.reason);
  });
  route();
}

start();
