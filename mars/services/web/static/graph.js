// Layout of a task's graph as a layered DAG, top to bottom.
//
// 1. Layers: a node's layer is the longest path to it from a source, so every
//    edge points downwards. At subtask level the graphs of successive stages
//    are stacked, each below the previous one.
// 2. Order within a layer: a few barycentre sweeps (a node moves towards the
//    mean position of its neighbours in the layer above, then below), which
//    removes most edge crossings.
// 3. Coordinates: each layer is a row, centred; a layer wider than `maxRowWidth`
//    wraps onto several rows, so a 1,600-wide layer stays on screen.
// Each pass is linear in nodes + edges (plus a sort per layer), so 2,000 nodes
// lay out in a few milliseconds.

const SWEEPS = 2;

/** Index the graph: node i, its predecessors and successors as arrays of indices. */
export function indexGraph(nodes, edges) {
  const index = new Map();
  nodes.forEach((n, i) => index.set(n.id, i));
  const preds = nodes.map(() => []);
  const succs = nodes.map(() => []);
  for (const [from, to] of edges) {
    const a = index.get(from);
    const b = index.get(to);
    // a truncated graph has edges to nodes it left out; self-loops would never settle
    if (a === undefined || b === undefined || a === b) continue;
    preds[b].push(a);
    succs[a].push(b);
  }
  return { index, preds, succs };
}

/** Kahn's topological order; nodes on a cycle (never in a DAG) come last in input order. */
export function topoOrder(preds, succs) {
  const n = preds.length;
  const indegree = preds.map((p) => p.length);
  const order = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) order.push(i);
  for (let head = 0; head < order.length; head++) {
    for (const s of succs[order[head]]) {
      indegree[s] -= 1;
      if (indegree[s] === 0) order.push(s);
    }
  }
  if (order.length < n) {
    const seen = new Uint8Array(n);
    for (const i of order) seen[i] = 1;
    for (let i = 0; i < n; i++) if (!seen[i]) order.push(i);
  }
  return order;
}

function longestPath(order, preds, base) {
  const layer = new Int32Array(preds.length);
  for (const v of order) {
    let l = base ? base(v) : 0;
    for (const u of preds[v]) if (layer[u] + 1 > l) l = layer[u] + 1;
    layer[v] = l;
  }
  return layer;
}

/**
 * The layer of every node: the longest path from a source; when nodes carry a
 * `stage`, each stage starts below the deepest layer of the stages before it.
 */
export function assignLayers(nodes, preds, order) {
  const plain = longestPath(order, preds, null);
  const stages = Array.from(new Set(nodes.map((n) => n.stage ?? 0))).sort((a, b) => a - b);
  if (stages.length < 2) return plain;
  const depth = new Map(stages.map((s) => [s, 0]));
  nodes.forEach((n, i) => {
    const s = n.stage ?? 0;
    depth.set(s, Math.max(depth.get(s), plain[i] + 1));
  });
  const offset = new Map();
  let total = 0;
  for (const s of stages) {
    offset.set(s, total);
    total += depth.get(s);
  }
  return longestPath(order, preds, (v) => offset.get(nodes[v].stage ?? 0));
}

function groupLayers(layer) {
  const layers = [];
  for (let v = 0; v < layer.length; v++) {
    while (layers.length <= layer[v]) layers.push([]);
    layers[layer[v]].push(v);
  }
  return layers.filter((l) => l.length > 0);
}

// position of each node within its layer, scaled to 0..1 so layers of different widths compare
function relativePositions(layers, n) {
  const pos = new Float64Array(n);
  for (const row of layers) {
    const span = Math.max(1, row.length - 1);
    row.forEach((v, i) => {
      pos[v] = i / span;
    });
  }
  return pos;
}

function sweep(layers, neighbours, pos, key, indices) {
  const byKey = (a, b) => key[a] - key[b];
  for (const li of indices) {
    const row = layers[li];
    for (const v of row) {
      const ns = neighbours[v];
      let sum = 0;
      for (const u of ns) sum += pos[u];
      key[v] = ns.length ? sum / ns.length : pos[v];
    }
    row.sort(byKey); // Array.sort is stable: ties keep their order
    const span = Math.max(1, row.length - 1);
    row.forEach((v, i) => {
      pos[v] = i / span;
    });
  }
}

/** Reorder each layer (in place) by barycentre sweeps down and up. */
export function orderLayers(layers, preds, succs, n) {
  const pos = relativePositions(layers, n);
  const key = new Float64Array(n);
  const down = layers.map((_, i) => i).slice(1);
  const up = layers.map((_, i) => i).reverse().slice(1);
  for (let i = 0; i < SWEEPS; i++) {
    sweep(layers, preds, pos, key, down);
    sweep(layers, succs, pos, key, up);
  }
}

/**
 * Lay out `nodes` and `edges` (from the graph API). `size` gives the node box:
 * {width, height, gapX, gapY, rowGap, maxRowWidth}. Returns
 * {x, y (Float64Arrays of node centres), index, preds, succs, width, height}.
 */
export function layout(nodes, edges, size) {
  const { index, preds, succs } = indexGraph(nodes, edges);
  const order = topoOrder(preds, succs);
  const layers = groupLayers(assignLayers(nodes, preds, order));
  orderLayers(layers, preds, succs, nodes.length);
  return { ...place(layers, nodes.length, size), index, preds, succs };
}

function place(layers, n, size) {
  const stepX = size.width + size.gapX;
  const perRow = Math.max(1, Math.floor((size.maxRowWidth + size.gapX) / stepX));
  const widest = Math.min(perRow, Math.max(1, ...layers.map((l) => l.length)));
  const width = widest * stepX - size.gapX;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  let top = 0;
  for (const row of layers) {
    for (let start = 0; start < row.length; start += perRow) {
      const chunk = row.slice(start, start + perRow);
      const left = (width - (chunk.length * stepX - size.gapX)) / 2;
      chunk.forEach((v, i) => {
        x[v] = left + i * stepX + size.width / 2;
        y[v] = top + size.height / 2;
      });
      top += size.height + size.rowGap;
    }
    top += size.gapY - size.rowGap;
  }
  return { x, y, width, height: Math.max(size.height, top - size.gapY) };
}
