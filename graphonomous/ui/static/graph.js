// The canvas graph model: one plane of nodes and edges, BendScript's shapes, and its topology cache.
//
// Rules of this file:
// * Nodes {id, text, type, x, y, vx, vy, pinned, pulse, width, height, data} and edges
//   {id, a, b, props: {kind, label, strength}, storedId} follow BendScript (seed 000), so
//   topology.js reads a plane as-is (a/b → source/target, props.kind → relationship).
// * Every edge add/remove goes through addEdge/removeEdge, which set plane._topologyDirty;
//   getTopology() recomputes only when dirty and logs console.debug("[κ] topology: …ms").
// * The saved canvas document is the {"nodes", "edges"} document `graphonomous topology -`
//   and topology-cli.mjs read, with canonical snake_case keys.
import { adjacencyFromDocument, analyzeTopology, orient, previewEdgeImpact } from './topology.js';

const LABEL_CHARS = 28;
const NODE_HEIGHT = 26;
const NODE_MIN_WIDTH = 40;
const CHAR_WIDTH = 6.6; // 11 px monospace

let uidCounter = 0;
function uid(prefix) {
  uidCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${uidCounter}`;
}

/** A short one-line label for a node's content (the full text stays in node.text). */
export function shortLabel(text) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length <= LABEL_CHARS ? flat : flat.slice(0, LABEL_CHARS - 1) + '…';
}

/** Deterministic pseudo-random start position from an id (same graph → same first layout). */
function seededPosition(id, spread) {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  const angle = ((h >>> 0) % 3600) / 3600 * Math.PI * 2;
  const radius = spread * Math.sqrt((((h >>> 12) % 1000) + 1) / 1000);
  return [Math.cos(angle) * radius, Math.sin(angle) * radius];
}

export function createPlane(name = 'Main') {
  return { id: uid('plane'), name, nodes: [], edges: [], camera: { x: 0, y: 0, zoom: 1 }, tick: 0, _topologyDirty: true, _topologyCache: null, _byId: new Map() };
}

export function nodeById(plane, id) {
  return plane._byId.get(id) ?? null;
}

/** Add (or refresh) a node; `data` is the stored node dict (null for canvas-only nodes). */
export function addNode(plane, id, text, x, y, data = null) {
  const existing = nodeById(plane, id);
  if (existing) {
    if (data) existing.data = data;
    return existing;
  }
  const label = shortLabel(text || id);
  const spread = 60 + 18 * Math.sqrt(plane.nodes.length + 1);
  const [sx, sy] = x === undefined ? seededPosition(id, spread) : [x, y];
  const node = {
    id, text: text || id, label, type: 'normal', x: sx, y: sy, vx: 0, vy: 0, fx: 0, fy: 0,
    pinned: false, pulse: 0, width: Math.max(NODE_MIN_WIDTH, label.length * CHAR_WIDTH + 16), height: NODE_HEIGHT,
    data, createdAt: Date.now(),
  };
  plane.nodes.push(node);
  plane._byId.set(id, node);
  plane._topologyDirty = true; // the universe changed
  return node;
}

/** Add an edge a→b (BendScript addEdge); `storedId` links it to the stored edge, if any. */
export function addEdge(plane, a, b, props = {}, storedId = null) {
  if (storedId && plane.edges.some((e) => e.storedId === storedId)) return null;
  const edge = { id: storedId || uid('edge'), a, b, props: { kind: 'causal', label: props.kind || 'causal', strength: 3, ...props }, storedId };
  plane.edges.push(edge);
  plane._topologyDirty = true;
  return edge;
}

export function removeEdge(plane, edge) {
  const i = plane.edges.indexOf(edge);
  if (i >= 0) {
    plane.edges.splice(i, 1);
    plane._topologyDirty = true;
  }
}

export function clearPlane(plane) {
  plane.nodes = [];
  plane.edges = [];
  plane._byId = new Map();
  plane._topologyDirty = true;
  plane._topologyCache = null;
}

/** The κ arc [from, to] of a canvas edge, or null when its kind is excluded. */
export function edgeArc(edge) {
  return orient(edge.a, edge.b, edge.props?.kind ?? null);
}

/** The cached topology (camelCase), recomputed only when the dirty flag is set. */
export function getTopology(plane) {
  if (!plane._topologyDirty && plane._topologyCache) return plane._topologyCache;
  const started = performance.now();
  const result = analyzeTopology(plane);
  const ms = performance.now() - started;
  console.debug(`[κ] topology: ${ms.toFixed(2)}ms`);
  plane._topologyCache = result;
  plane._topologyDirty = false;
  plane._topologyMs = ms;
  plane._sccOf = new Map();
  for (const scc of result.sccs) for (const id of scc.nodes) plane._sccOf.set(id, scc);
  plane._faultArcs = new Set(result.sccs.flatMap((s) => s.faultLineEdges.map((f) => `${f.source}\u0000${f.target}`)));
  return result;
}

export function sccOfNode(plane, id) {
  getTopology(plane);
  return plane._sccOf.get(id) ?? null;
}

export function isFaultLine(plane, edge) {
  getTopology(plane);
  const arc = edgeArc(edge);
  return arc !== null && plane._faultArcs.has(`${arc[0]}\u0000${arc[1]}`);
}

/** previewEdgeImpact against the cached analysis (the plane is never mutated). */
export function previewOnPlane(plane, src, dst) {
  return previewEdgeImpact(plane, src, dst, { before: getTopology(plane) });
}

/** Max κ of the plane without the given edges (for Unbend's confirmation), on a copy. */
export function kappaWithout(plane, removed) {
  const skip = new Set(removed);
  return analyzeTopology({ nodes: plane.nodes, edges: plane.edges.filter((e) => !skip.has(e)) }).maxKappa;
}

/** Nodes within `radius` world units of `node`, nearest first (ties by id). */
export function nodesNear(plane, node, radius) {
  return plane.nodes
    .filter((n) => n !== node)
    .map((n) => ({ n, d: Math.hypot(n.x - node.x, n.y - node.y) }))
    .filter(({ d }) => d <= radius)
    .sort((p, q) => p.d - q.d || (p.n.id < q.n.id ? -1 : 1))
    .map(({ n }) => n);
}

/** Add stored nodes and edges (facade dicts, snake_case) to the plane; returns how many nodes were new. */
export function importView(plane, nodes, edges) {
  const before = plane.nodes.length;
  for (const n of nodes) addNode(plane, n.id, n.content, undefined, undefined, n);
  for (const e of edges) {
    if (nodeById(plane, e.source_id) && nodeById(plane, e.target_id)) {
      addEdge(plane, e.source_id, e.target_id, { kind: e.relationship, label: e.relationship, strength: e.strength }, e.id);
    }
  }
  return plane.nodes.length - before;
}

/** The canvas as a {"nodes", "edges"} document (snake_case; node objects keep text and position). */
export function toDocument(plane) {
  return {
    nodes: plane.nodes.map((n) => ({ id: n.id, text: n.text, x: Math.round(n.x), y: Math.round(n.y) })),
    edges: plane.edges.map((e) => ({ source: e.a, target: e.b, relationship: e.props.kind })),
  };
}

/** Replace the plane by a loaded {"nodes","edges"} document; throws ValidationError naming the field. */
export function loadDocument(plane, doc) {
  adjacencyFromDocument(doc); // validates every id and kind first: a bad file changes nothing
  clearPlane(plane);
  for (const n of doc.nodes ?? []) {
    if (typeof n === 'string') addNode(plane, n, n);
    else addNode(plane, n.id, n.text ?? n.content ?? n.id, n.x, n.y);
  }
  (doc.edges ?? []).forEach((e) => {
    const a = Array.isArray(e) ? e[0] : e.source ?? e.source_id ?? e.from ?? e.a;
    const b = Array.isArray(e) ? e[1] : e.target ?? e.target_id ?? e.to ?? e.b;
    const kind = Array.isArray(e) ? null : e.relationship ?? e.edge_type ?? e.kind ?? e.props?.kind ?? null;
    for (const id of [a, b]) if (!nodeById(plane, id)) addNode(plane, id, id);
    addEdge(plane, a, b, { kind, label: kind ?? 'arc' });
  });
}
