// The κ canvas page: boot, camera (pan/zoom), input (drag, right-click), the render loop, the HUD,
// and the panels onto the real graph (search, node details, expand, stats, writes, load/save).
//
// Rules of this file:
// * The relationship table comes from the server (/relationships.json, exported from
//   graphonomous.model at serve time) before anything is analysed.
// * User text reaches the DOM only through textContent (never innerHTML).
// * A view never exceeds the server's max_view_nodes; a refused expansion says why.
// * window.canvasApp is the page's scripting surface (used by the browser tests): it exposes
//   state and actions, never a second code path — every action is the one the mouse triggers.
import { api, ApiError } from './api.js';
import {
  addEdge, clearPlane, createPlane, getTopology, importView, loadDocument, nodeById, removeEdge, shortLabel, toDocument,
} from './graph.js';
import { ALPHA_MIN, settle, simulate } from './layout.js';
import { ContextMenu, unbendPlan, bendTarget, impactLabel } from './menu.js';
import { drawBackground, drawEdges, drawNodes, drawTopology, drawnPairs, haloBoxes, edgeSegment } from './renderer.js';
import { analyzeTopology, setRelationshipTable, toCanonical, previewEdgeImpact, canonicalJSON } from './topology.js';

const MODE_COLORS = Object.freeze({ RETRIEVAL: '#00ff88', DELIBERATION: '#00ccff' });
const MIN_ZOOM = 0.1;
const MAX_ZOOM = 4;
const DRAG_THRESHOLD = 4; // px before a press becomes a drag

const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const ctx = canvas.getContext('2d');

const app = {
  plane: createPlane(),
  config: { allow_writes: false, max_view_nodes: 400 },
  selectedId: null,
  alpha: 0,
  view: 'graph',
  lastSearch: null,
  frozen: false,
  // The analysis behind the last search ({max_kappa, scc_count, signature}): the HUD shows
  // it while the canvas still holds exactly that search's drawing, so the HUD and the search
  // panel show one κ; any edit (an edge added or removed, an expand) hands the HUD back to
  // the canvas's own analysis.
  served: null,
};

/** What the κ of the drawing depends on: its nodes and its arcs (positions do not count). */
function drawingSignature(plane) {
  const arcs = plane.edges.map((e) => `${e.a}>${e.b}:${e.props.kind ?? ''}`).sort();
  return `${plane.nodes.length}#${arcs.join('|')}`;
}

/** {maxKappa, sccCount, source} the HUD shows (see `app.served`). */
function hudTopology() {
  const served = app.served;
  if (served && served.signature === drawingSignature(app.plane)) {
    return { maxKappa: served.max_kappa, sccCount: served.scc_count, source: 'search' };
  }
  const topo = getTopology(app.plane);
  return { maxKappa: topo.maxKappa, sccCount: topo.sccCount, source: 'canvas' };
}

// ── camera ──────────────────────────────────────────────────────────────────

function size() {
  return [canvas.clientWidth, canvas.clientHeight];
}

function toScreen(x, y) {
  const [W, H] = size();
  const c = app.plane.camera;
  return [(x - c.x) * c.zoom + W / 2, (y - c.y) * c.zoom + H / 2];
}

function toWorld(sx, sy) {
  const [W, H] = size();
  const c = app.plane.camera;
  return [(sx - W / 2) / c.zoom + c.x, (sy - H / 2) / c.zoom + c.y];
}

function fit() {
  const nodes = app.plane.nodes;
  const c = app.plane.camera;
  if (nodes.length === 0) {
    Object.assign(c, { x: 0, y: 0, zoom: 1 });
    return;
  }
  const xs = nodes.flatMap((n) => [n.x - n.width / 2, n.x + n.width / 2]);
  const ys = nodes.flatMap((n) => [n.y - n.height / 2, n.y + n.height / 2]);
  const [W, H] = size();
  const w = Math.max(...xs) - Math.min(...xs) + 160;
  const h = Math.max(...ys) - Math.min(...ys) + 160;
  c.x = (Math.max(...xs) + Math.min(...xs)) / 2;
  c.y = (Math.max(...ys) + Math.min(...ys)) / 2;
  c.zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, Math.min(W / w, H / h, 1.5)));
}

function nodeAtPoint(sx, sy) {
  const [wx, wy] = toWorld(sx, sy);
  for (let i = app.plane.nodes.length - 1; i >= 0; i--) {
    const n = app.plane.nodes[i];
    if (Math.abs(wx - n.x) <= n.width / 2 && Math.abs(wy - n.y) <= n.height / 2) return n;
  }
  return null;
}

// ── messages, HUD, modal ────────────────────────────────────────────────────

function message(text, kind = 'info') {
  const el = $('banner');
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = !text;
}

function reportError(err) {
  message(err instanceof Error ? err.message : String(err), 'error');
}

function updateHud() {
  const topo = hudTopology();
  const mode = topo.maxKappa > 0 ? 'DELIBERATION' : 'RETRIEVAL';
  $('hud-nodes').textContent = String(app.plane.nodes.length);
  $('hud-edges').textContent = String(app.plane.edges.length);
  $('hud-depth').textContent = '0';
  $('hud-zoom').textContent = app.plane.camera.zoom.toFixed(2);
  $('hud-kappa').textContent = String(topo.maxKappa);
  $('hud-kappa').title = topo.source === 'search' ? 'κ of the search (retrieve_context topology)' : 'κ of the drawing';
  $('hud-kappa').dataset.source = topo.source;
  $('hud-sccs').textContent = String(topo.sccCount);
  const modeEl = $('hud-mode');
  modeEl.textContent = mode;
  modeEl.style.color = MODE_COLORS[mode];
  $('hud-writes').textContent = app.config.allow_writes ? 'stored' : 'canvas only';
}

function confirmDialog(text, onOk) {
  const modal = $('modal');
  $('modal-text').textContent = text;
  modal.hidden = false;
  const done = (ok) => {
    modal.hidden = true;
    $('modal-ok').onclick = null;
    $('modal-cancel').onclick = null;
    if (ok) onOk();
  };
  $('modal-ok').onclick = () => done(true);
  $('modal-cancel').onclick = () => done(false);
  $('modal-ok').focus();
}

// ── actions (the mouse and window.canvasApp call the same functions) ──────────

function reheat(alpha = 0.6) {
  if (!app.frozen) app.alpha = Math.max(app.alpha, alpha);
}

async function connect(aId, bId) {
  const a = nodeById(app.plane, aId);
  const b = nodeById(app.plane, bId);
  if (!a || !b) return null;
  const kind = 'causal';
  const preview = previewEdgeImpact(app.plane, aId, bId);
  let storedId = null;
  if (app.config.allow_writes && a.data && b.data) {
    try {
      storedId = (await api.addEdge(aId, bId, kind)).edge.id;
    } catch (err) {
      reportError(err);
      return null;
    }
  }
  const edge = addEdge(app.plane, aId, bId, { kind, label: kind }, storedId) ?? app.plane.edges.find((e) => e.storedId === storedId);
  message(`${preview.description}${storedId ? ' Stored.' : app.config.allow_writes ? '' : ' (canvas only: the server is read-only)'}`);
  reheat(0.3);
  return edge;
}

async function removeArc(plan) {
  const ids = plan.edges.map((e) => e.storedId).filter(Boolean);
  if (app.config.allow_writes && ids.length) {
    try {
      await api.deleteEdges(ids);
    } catch (err) {
      reportError(err);
      return;
    }
  }
  for (const e of plan.edges) removeEdge(app.plane, e);
  message(`Removed ${plan.fault.source}→${plan.fault.target} (κ ${plan.before}→${getTopology(app.plane).maxKappa})${ids.length && app.config.allow_writes ? '; deleted from the graph' : ''}.`);
}

function showView(result, view) {
  app.served = null;
  clearPlane(app.plane);
  importView(app.plane, result.nodes, result.edges);
  settle(app.plane);
  fit();
  app.view = view;
  app.alpha = 0;
  message(result.message ?? (result.nodes.length === 0 ? 'The graph is empty: run `graphonomous scan .` or add nodes.' : ''), result.truncated ? 'warn' : 'info');
}

async function loadGraph() {
  showView(await api.graph(), 'graph');
  closePanel();
}

async function search(text) {
  if (!text.trim()) return loadGraph();
  const result = await api.search(text);
  showView(result, 'search');
  const t = result.topology;
  app.served = { max_kappa: t.max_kappa, scc_count: t.scc_count, signature: drawingSignature(app.plane) };
  app.lastSearch = result;
  renderSearchPanel(result);
  return result;
}

async function expand(id) {
  const result = await api.expand(id);
  const fresh = result.nodes.filter((n) => !nodeById(app.plane, n.id));
  const cap = app.config.max_view_nodes;
  if (app.plane.nodes.length + fresh.length > cap) {
    message(`Expanding ${shortLabel(nodeById(app.plane, id)?.text ?? id)} would show ${app.plane.nodes.length + fresh.length} nodes, more than the view's cap of ${cap}; search for a smaller region.`, 'warn');
    return result;
  }
  const root = nodeById(app.plane, id);
  for (const n of fresh) {
    const angle = Math.random() * Math.PI * 2;
    importView(app.plane, [n], []);
    const placed = nodeById(app.plane, n.id);
    placed.x = root.x + Math.cos(angle) * 90;
    placed.y = root.y + Math.sin(angle) * 90;
  }
  importView(app.plane, [], result.edges);
  reheat(0.8);
  message(result.message ?? `Expanded ${root.label}: ${fresh.length} new node(s).`, result.truncated ? 'warn' : 'info');
  return result;
}

// ── panels ──────────────────────────────────────────────────────────────────

function closePanel() {
  $('panel').hidden = true;
  $('panel').replaceChildren();
}

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (className) e.className = className;
  return e;
}

function panel(title, id) {
  const p = $('panel');
  p.replaceChildren();
  p.dataset.kind = id;
  const head = el('div', null, 'panel-head');
  head.append(el('h2', title));
  const close = el('button', '×', 'close');
  close.type = 'button';
  close.onclick = closePanel;
  head.append(close);
  p.append(head);
  p.hidden = false;
  return p;
}

function row(parent, label, value) {
  const r = el('div', null, 'row');
  r.append(el('span', label, 'key'), el('span', value ?? '—', 'value'));
  parent.append(r);
  return r;
}

/** "path:12–40" for ingested chunks, else the node's source. */
export function provenance(node) {
  const m = node.metadata ?? {};
  if (m.path) return m.line_start ? `${m.path}:${m.line_start}–${m.line_end ?? m.line_start}` : m.path;
  return node.source ?? null;
}

async function select(id) {
  app.selectedId = id;
  const local = nodeById(app.plane, id);
  if (!local?.data) {
    const p = panel(local?.label ?? id, 'node');
    row(p, 'id', id);
    row(p, 'stored', 'no (canvas only)');
    return;
  }
  let found;
  try {
    found = await api.node(id);
  } catch (err) {
    reportError(err);
    return;
  }
  const n = found.node;
  const p = panel(shortLabel(n.content), 'node');
  row(p, 'id', n.id);
  row(p, 'type', n.node_type);
  row(p, 'timescale', n.timescale);
  row(p, 'confidence', n.confidence.toFixed(3));
  row(p, 'Q-value', n.q_value.toFixed(3));
  row(p, 'provenance', provenance(n)).dataset.testid = 'provenance';
  const scc = getTopology(app.plane).sccs.find((s) => s.nodes.includes(n.id));
  row(p, 'topology', scc ? `${scc.id}, κ ${scc.kappa} (deliberate)` : 'DAG node (fast)');
  p.append(el('h3', 'Content'), el('pre', n.content, 'content'));
  const expandBtn = el('button', 'Expand neighbourhood');
  expandBtn.type = 'button';
  expandBtn.onclick = () => expand(n.id).catch(reportError);
  p.append(expandBtn);
  const names = new Map(found.neighbours.map((x) => [x.id, shortLabel(x.content)]));
  p.append(el('h3', `Edges (${found.edges.length})`));
  const list = el('ul', null, 'edges');
  for (const e of found.edges) {
    const out = e.source_id === n.id;
    const other = out ? e.target_id : e.source_id;
    list.append(el('li', `${out ? '→' : '←'} ${e.relationship} ${out ? '→' : '←'} ${names.get(other) ?? other}`));
  }
  p.append(list);
  p.append(el('h3', `Neighbours (${found.neighbours.length})`));
  const nb = el('div', null, 'neighbours');
  for (const x of found.neighbours) {
    const b = el('button', shortLabel(x.content), 'chip');
    b.type = 'button';
    b.onclick = () => (nodeById(app.plane, x.id) ? select(x.id) : expand(n.id).then(() => select(x.id))).catch(reportError);
    nb.append(b);
  }
  p.append(nb);
}

function renderSearchPanel(result) {
  const p = panel(`Search: ${result.query}`, 'search');
  const t = result.topology;
  const routing = row(p, 'routing', `${t.routing} (max κ ${t.max_kappa}, ${t.scc_count} SCC)`);
  routing.dataset.testid = 'search-routing';
  const region = result.stats.topology_region;
  if (region.cut !== 'none') {
    const bound = region.cut === 'radius' ? `radius ${region.radius}` : 'node budget';
    row(p, 'loops', `looked for in ${region.walked} nodes, cut at the ${bound} (${region.arcs_not_followed} arcs not followed)`);
  }
  row(p, 'results', `${result.results.length}${result.truncated ? ` (showing ${result.nodes.length})` : ''}`);
  for (const scc of t.sccs) {
    const names = (id) => nodeById(app.plane, id)?.label ?? id;
    p.append(el('h3', `${scc.id}: κ ${scc.kappa}, ${scc.nodes.length} nodes`));
    const ul = el('ul', null, 'faults');
    for (const f of scc.fault_line_edges) ul.append(el('li', `fault line ${names(f.source)} → ${names(f.target)}`));
    p.append(ul);
  }
  p.append(el('h3', 'Ranked'));
  const ol = el('ol', null, 'ranked');
  const byId = new Map(result.nodes.map((n) => [n.id, n]));
  for (const r of result.results) {
    const node = byId.get(r.node_id);
    const where = node ? provenance(node) : null;
    const li = el('li', null, 'result');
    li.dataset.testid = 'search-result';
    li.append(el('span', r.score.toFixed(3), 'score'));
    if (where && node?.metadata?.path) li.append(el('span', where, 'where'));
    li.append(el('span', shortLabel(r.content), 'text'));
    li.onclick = () => select(r.node_id);
    ol.append(li);
  }
  p.append(ol);
}

async function showOverview() {
  const o = await api.overview();
  const p = panel('Overview by folder', 'overview');
  row(p, 'nodes', o.total);
  row(p, 'folders', o.group_count);
  if (o.message) p.append(el('p', o.message, 'note'));
  const table = el('table', null, 'overview');
  const head = el('tr');
  for (const h of ['folder', 'nodes', 'files', 'κ', 'SCCs', 'edges', 'across']) head.append(el('th', h));
  table.append(head);
  for (const g of o.groups) {
    const tr = el('tr');
    tr.dataset.testid = 'overview-group';
    for (const v of [g.folder, g.node_count, g.file_count, g.max_kappa, g.scc_count, g.edge_count, g.crossing_edge_count]) tr.append(el('td', v));
    tr.title = `${g.routing}: κ ${g.max_kappa} inside ${g.folder}`;
    table.append(tr);
  }
  p.append(table);
  return o;
}

async function showStats() {
  const s = await api.stats();
  const p = panel('Graph statistics', 'stats');
  const st = s.stats;
  row(p, 'nodes', `${st.node_count} (+${st.forgotten_count} forgotten)`);
  row(p, 'edges', st.edge_count);
  p.append(el('h3', 'By type'));
  for (const [k, v] of Object.entries(st.nodes_by_type)) if (v) row(p, k, v);
  p.append(el('h3', 'By timescale'));
  for (const [k, v] of Object.entries(st.nodes_by_timescale)) if (v) row(p, k, v);
  p.append(el('h3', 'Budget'));
  row(p, 'forgetting policy', s.forgetting?.policy);
  row(p, 'max nodes', s.forgetting?.max_nodes);
  row(p, 'memory pressure', s.memory_pressure ? s.memory_pressure.summary ?? 'high' : 'none');
  const topo = getTopology(app.plane);
  for (const scc of topo.sccs) {
    const b = scc.deliberationBudget;
    row(p, `${scc.id} (κ ${scc.kappa})`, `${b.maxIterations} iterations, ${b.agentCount} agents, ×${b.timeoutMultiplier} time, ≥ ${b.confidenceThreshold}`);
  }
  p.append(el('h3', 'Last consolidation'));
  const last = s.last_consolidation;
  row(p, 'finished', last ? last.finished_at : 'never');
  if (last) for (const [k, v] of Object.entries(last.totals ?? {})) row(p, k, typeof v === 'object' ? JSON.stringify(v) : v);
  return s;
}

async function consolidate() {
  if (!app.config.allow_writes) {
    message('Read-only: start `graphonomous ui --allow-writes` to run consolidation.', 'warn');
    return null;
  }
  const result = await api.consolidate();
  message(`Consolidation ${result.id} done.`);
  await showStats();
  return result;
}

function saveCanvas() {
  const text = JSON.stringify(toDocument(app.plane), null, 2) + '\n';
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  link.download = 'canvas.json';
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  return text;
}

function loadCanvas(doc) {
  loadDocument(app.plane, doc);
  settle(app.plane);
  fit();
  app.view = 'document';
  closePanel();
  message(`Loaded a canvas document: ${app.plane.nodes.length} nodes, ${app.plane.edges.length} edges (canvas only).`);
}

// ── input ───────────────────────────────────────────────────────────────────

let press = null;

canvas.addEventListener('pointerdown', (ev) => {
  if (ev.button !== 0) return;
  const node = nodeAtPoint(ev.offsetX, ev.offsetY);
  press = { x: ev.offsetX, y: ev.offsetY, node, moved: false, cam: { ...app.plane.camera } };
  canvas.setPointerCapture(ev.pointerId);
});

canvas.addEventListener('pointermove', (ev) => {
  if (!press) {
    canvas.style.cursor = nodeAtPoint(ev.offsetX, ev.offsetY) ? 'pointer' : 'grab';
    return;
  }
  const dx = ev.offsetX - press.x;
  const dy = ev.offsetY - press.y;
  if (!press.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
  press.moved = true;
  if (press.node) {
    const [wx, wy] = toWorld(ev.offsetX, ev.offsetY);
    Object.assign(press.node, { x: wx, y: wy, vx: 0, vy: 0 });
    press.node.pinned = true;
    reheat(0.3);
  } else {
    const c = app.plane.camera;
    c.x = press.cam.x - dx / c.zoom;
    c.y = press.cam.y - dy / c.zoom;
  }
});

canvas.addEventListener('pointerup', () => {
  if (press && !press.moved) {
    if (press.node) select(press.node.id).catch(reportError);
    else app.selectedId = null;
  }
  press = null;
});

canvas.addEventListener('wheel', (ev) => {
  ev.preventDefault();
  const c = app.plane.camera;
  const [wx, wy] = toWorld(ev.offsetX, ev.offsetY);
  c.zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, c.zoom * Math.exp(-ev.deltaY * 0.0015)));
  const [W, H] = size();
  c.x = wx - (ev.offsetX - W / 2) / c.zoom;
  c.y = wy - (ev.offsetY - H / 2) / c.zoom;
}, { passive: false });

const menu = new ContextMenu($('menu'), {
  get plane() { return app.plane; },
  connect: (a, b) => connect(a, b).catch(reportError),
  expand: (id) => expand(id).catch(reportError),
  select: (id) => select(id).catch(reportError),
  confirm: confirmDialog,
  removeArc: (plan) => removeArc(plan).catch(reportError),
});

canvas.addEventListener('contextmenu', (ev) => {
  ev.preventDefault();
  const node = nodeAtPoint(ev.offsetX, ev.offsetY);
  if (node) menu.openFor(node, ev.clientX, ev.clientY);
  else menu.close();
});

$('search-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  search($('search').value).catch(reportError);
});
$('btn-all').onclick = () => loadGraph().catch(reportError);
$('btn-fit').onclick = fit;
$('btn-stats').onclick = () => showStats().catch(reportError);
$('btn-overview').onclick = () => showOverview().catch(reportError);
$('btn-consolidate').onclick = () => consolidate().catch(reportError);
$('btn-save').onclick = saveCanvas;
$('file-load').addEventListener('change', async (ev) => {
  const file = ev.target.files?.[0];
  if (!file) return;
  try {
    loadCanvas(JSON.parse(await file.text()));
  } catch (err) {
    reportError(err);
  }
  ev.target.value = '';
});

// ── the loop ────────────────────────────────────────────────────────────────

function resize() {
  const dpr = window.devicePixelRatio || 1;
  const [W, H] = size();
  canvas.width = Math.round(W * dpr);
  canvas.height = Math.round(H * dpr);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}
window.addEventListener('resize', resize);

function draw(now) {
  const [W, H] = size();
  const zoom = app.plane.camera.zoom;
  drawBackground(ctx, W, H);
  drawTopology(ctx, app.plane, toScreen, zoom);
  drawEdges(ctx, app.plane, toScreen, zoom);
  drawNodes(ctx, app.plane, toScreen, zoom, app.selectedId, now);
  updateHud();
}

function tick(now) {
  if (app.alpha > ALPHA_MIN && !app.frozen) app.alpha = simulate(app.plane, app.alpha);
  draw(now);
  requestAnimationFrame(tick);
}

// ── the scripting surface (browser tests, the console) ───────────────────────

window.canvasApp = {
  app,
  ready: false,
  topology: () => toCanonical(getTopology(app.plane)),
  /** Recompute κ now (sets the dirty flag first) and return the measured milliseconds. */
  recompute: () => {
    app.plane._topologyDirty = true;
    getTopology(app.plane);
    return app.plane._topologyMs;
  },
  hud: () => Object.fromEntries(['nodes', 'edges', 'depth', 'zoom', 'kappa', 'sccs', 'mode'].map((k) => [k, $(`hud-${k}`).textContent])),
  screenPosition: (id) => {
    const n = nodeById(app.plane, id);
    if (!n) return null;
    const [x, y] = toScreen(n.x, n.y);
    const r = canvas.getBoundingClientRect();
    return { x: x + r.left, y: y + r.top };
  },
  edgeScreenSegments: () => app.plane.edges.map((e) => {
    const seg = edgeSegment(app.plane, e, drawnPairs(app.plane));
    const r = canvas.getBoundingClientRect();
    const shift = ([x, y]) => { const [sx, sy] = toScreen(x, y); return [sx + r.left, sy + r.top]; };
    return seg && { id: e.id, a: e.a, b: e.b, kind: e.props.kind, from: shift(seg.from), to: shift(seg.to) };
  }).filter(Boolean),
  haloBoxes: () => {
    const r = canvas.getBoundingClientRect();
    return haloBoxes(app.plane, toScreen).map((b) => ({ ...b, x: b.x + r.left, y: b.y + r.top }));
  },
  /** Place nodes at world positions and stop the layout (deterministic screenshots). */
  place: (positions) => {
    for (const [id, [x, y]] of Object.entries(positions)) Object.assign(nodeById(app.plane, id), { x, y, vx: 0, vy: 0, pinned: true });
    app.frozen = true;
    app.alpha = 0;
    Object.assign(app.plane.camera, { x: 0, y: 0, zoom: 1 });
  },
  loadDocument: loadCanvas,
  saveDocument: () => toDocument(app.plane),
  search: (text) => search(text),
  expand: (id) => expand(id),
  select: (id) => select(id),
  stats: () => showStats(),
  consolidate: () => consolidate(),
  reload: () => loadGraph(),
  fit,
  unbendPlan: (id) => unbendPlan(app.plane, nodeById(app.plane, id)),
  bendTarget: (id) => bendTarget(app.plane, nodeById(app.plane, id))?.candidate.id ?? null,
  impactLabel,
  analyzeTopology: (doc) => toCanonical(analyzeTopology(doc)),
  canonicalJSON,
  serverTopology: (doc) => api.topology(doc),
};

async function boot() {
  resize();
  try {
    setRelationshipTable(await api.relationships());
    app.config = await api.config();
    document.body.dataset.writes = String(app.config.allow_writes);
    $('btn-consolidate').disabled = !app.config.allow_writes;
    $('btn-consolidate').title = app.config.allow_writes ? 'Run one consolidation cycle' : 'read-only: start with --allow-writes';
    await loadGraph();
  } catch (err) {
    reportError(err instanceof ApiError && err.status === 401 ? new Error('This server needs its token: open the page as …/#token=YOUR_TOKEN') : err);
  }
  window.canvasApp.ready = true;
  requestAnimationFrame(tick);
}

boot();
