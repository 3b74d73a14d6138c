// Small DOM helpers. Every string from the API reaches the page through
// textContent or setAttribute, never through innerHTML, so it cannot inject markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** Append children: nodes, strings (as text), arrays of either; null/undefined are skipped. */
export function append(node, children) {
  if (children === null || children === undefined) return node;
  if (!Array.isArray(children)) children = [children];
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** An HTML element: el("td", {class: "cpu", text: "1 / 3"}) or el("p", {}, [child, "text"]). */
export function el(tag, attrs, children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, attributes as for el(). */
export function svg(tag, attrs, children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replace all children of `node` with `children`. */
export function replace(node, children) {
  node.replaceChildren();
  return append(node, children);
}

/** A link to a dashboard route, e.g. link("#/sessions/abc", "abc"). */
export function link(hash, text, attrs) {
  return el("a", { ...attrs, href: hash, text });
}

/** A coloured word such as "running" or "lost". */
export function badge(word, extraClass, title) {
  const cls = ["badge", `badge-${String(word).toLowerCase()}`, extraClass].filter(Boolean).join(" ");
  return el("span", { class: cls, text: word, title: title || null });
}

/**
 * A horizontal meter: the fill shows value/max; the text next to it is for the
 * reader (and is the element's only text, so tests can read it).
 */
export function meter(value, max, text, title) {
  const ratio = value === null || value === undefined || !(max > 0) ? 0 : value / max;
  const clamped = Math.max(0, Math.min(1, ratio));
  const level = clamped >= 0.9 ? "high" : clamped >= 0.7 ? "mid" : "low";
  const bar = el("span", { class: `meter meter-${level}`, "aria-hidden": "true" }, [
    el("span", { class: "meter-fill", style: `width: ${(clamped * 100).toFixed(1)}%` }),
  ]);
  return el("span", { class: "meter-wrap", title }, [bar, el("span", { class: "meter-text", text })]);
}

/** A progress bar with its percentage, for tasks. */
export function progressBar(fraction, status) {
  const pct = Math.max(0, Math.min(1, Number(fraction) || 0)) * 100;
  return el("span", { class: `pbar pbar-${status || "none"}`, "aria-hidden": "true" }, [
    el("span", { class: "pbar-fill", style: `width: ${pct.toFixed(1)}%` }),
  ]);
}

/**
 * Bring a table body's rows in line with `items`, reusing rows by key so a
 * refresh does not rebuild the table (text selection and hover survive).
 * `cells(item)` returns [{cls, sig, fill(td)}]; a cell is refilled only when its sig changes.
 */
export function syncRows(tbody, items, keyAttr, keyOf, cells, rowClass) {
  const old = new Map();
  for (const tr of Array.from(tbody.rows)) {
    if (tr.hasAttribute(keyAttr)) old.set(tr.getAttribute(keyAttr), tr);
    else tr.remove(); // an "empty" placeholder row
  }
  items.forEach((item, i) => {
    const key = keyOf(item);
    let tr = old.get(key);
    old.delete(key);
    if (!tr) tr = el("tr", { [keyAttr]: key });
    tr.className = rowClass ? rowClass(item) : "";
    syncCells(tr, cells(item));
    if (tbody.rows[i] !== tr) tbody.insertBefore(tr, tbody.rows[i] || null);
  });
  for (const tr of old.values()) tr.remove();
}

function syncCells(tr, specs) {
  specs.forEach((spec, i) => {
    let td = tr.cells[i];
    if (!td) td = tr.appendChild(el("td"));
    td.className = spec.cls || "";
    if (td._sig === spec.sig) return;
    td._sig = spec.sig;
    td.replaceChildren();
    spec.fill(td);
  });
  while (tr.cells.length > specs.length) tr.deleteCell(-1);
}

/** A cell spec showing plain text (and an optional hover title). */
export function textCell(cls, text, title) {
  const value = text === null || text === undefined ? "" : String(text);
  return {
    cls,
    sig: `t:${value}|${title || ""}`,
    fill(td) {
      td.textContent = value;
      if (title) td.title = title;
      else td.removeAttribute("title");
    },
  };
}

/** A cell spec built by `build()` (returns nodes); refilled when `sig` changes. */
export function nodeCell(cls, sig, build) {
  return { cls, sig: `n:${sig}`, fill: (td) => append(td, build()) };
}

/** A placeholder row shown when a table has nothing to list. */
export function emptyRow(tbody, colspan, text) {
  if (tbody.rows.length) return;
  tbody.append(el("tr", { class: "empty" }, [el("td", { colspan, text })]));
}

/** A table with a caption-less header; returns {table, tbody}. */
export function table(id, headings) {
  const head = el("tr", {}, headings.map((h) => el("th", { scope: "col", text: h })));
  const tbody = el("tbody");
  const tableEl = el("table", { id, class: "data" }, [el("thead", {}, head), tbody]);
  return { table: tableEl, tbody };
}
