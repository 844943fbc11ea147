// ═══════════════════════════════════════════════════════════════
// κ TOPOLOGY ENGINE
// Canonical schema: seed 000 §A.1; algorithm and tie-breaks: SPEC.md §5
// DOM-free — no window/document/canvas references
// ═══════════════════════════════════════════════════════════════
//
// Rules of this file:
// * It is a port of graphonomous/topology (Python) and must give the same
//   results on every input: same universe, same SCC order, same κ, same
//   fault lines, same budgets, same preview text.  `graphonomous contract
//   fixtures --run "node graphonomous/ui/topology-cli.mjs" --mode exact`
//   and tests/test_ui_js_parity.py (≥ 1,000 random graphs) prove it.
// * Edge directions come ONLY from the relationship table exported by
//   graphonomous/ui/relationships.py (setRelationshipTable); nothing here
//   names a relationship kind except DIRECTED_KINDS, the seed's BendScript
//   rule, which a test checks against that table.
// * Inside: camelCase.  Anything sent or saved goes through toCanonical(),
//   the one explicit camelCase → snake_case mapper.
// * Ids sort by Unicode code point (compareIds), never by UTF-16 units.

/** Seed 000 Task 2.1: of BendScript's kinds only these are directed (context, associative, user are excluded). */
export const DIRECTED_KINDS = Object.freeze(['causal', 'temporal']);

/** Arc inspections per SCC before κ becomes an upper bound (Python: DEFAULT_WORK_BUDGET). */
export const DEFAULT_WORK_BUDGET = 20_000_000;

/** Budget floats are rounded to this many decimals (Python: BUDGET_DIGITS). */
const BUDGET_DIGITS = 10;

/** A bad input, naming the offending field (Python: model.ValidationError). */
export class ValidationError extends Error {
  constructor(field, message) {
    super(`${field}: ${message}`);
    this.name = 'ValidationError';
    this.field = field;
    this.detail = message;
  }
}

// ── the relationship table (one source of truth: graphonomous.model) ──────────

let table = null;

/**
 * Install the table exported by graphonomous/ui/relationships.py (the JSON
 * document served at /relationships.json and shipped as static/relationships.json).
 */
export function setRelationshipTable(doc) {
  if (!doc || typeof doc !== 'object' || !doc.kappa_arc_direction || !Array.isArray(doc.known_kinds)) {
    throw new ValidationError('relationship_table', 'must be the document of graphonomous.ui.relationships');
  }
  table = {
    direction: new Map(Object.entries(doc.kappa_arc_direction)),
    known: new Set(doc.known_kinds),
    aliases: new Map(Object.entries(doc.edge_field_aliases || {})),
    maxIdChars: doc.max_id_chars,
    defaultRelationship: doc.canvas_default_relationship,
    doc,
  };
}

function requireTable() {
  if (table === null) throw new Error('topology.js: call setRelationshipTable() first');
  return table;
}

/** The installed table's direction of a kind: 1, -1, or 0 (excluded). Throws for unknown kinds. */
export function arcDirection(kind) {
  const t = requireTable();
  if (kind === null || kind === undefined) return 1;
  const d = t.direction.get(kind);
  if (d !== undefined) return d;
  if (!t.known.has(kind)) throw new ValidationError('relationship', `unknown relationship '${kind}'`);
  return 0;
}

export function relationshipTable() {
  return requireTable().doc;
}

// ── ids ─────────────────────────────────────────────────────────────────────

/** Compare two ids by Unicode code point (= Python str order = UTF-8 byte order). */
export function compareIds(a, b) {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates (U+D800–DFFF, i.e. code points ≥ U+10000) must sort above U+E000–FFFF.
      x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
      y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
      return x - y;
    }
  }
  return a.length - b.length;
}

function sortedIds(ids) {
  return Array.from(ids).sort(compareIds);
}

function codePointLength(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function checkId(field, value) {
  const max = requireTable().maxIdChars;
  if (typeof value !== 'string' || value.length === 0 || codePointLength(value) > max) {
    throw new ValidationError(field, `must be a non-empty string of at most ${max} characters`);
  }
  return value;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function pyTypeName(v) {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  if (v === null) return 'NoneType';
  if (typeof v === 'object') return 'dict';
  return typeof v;
}

function sameValue(a, b) {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

// ── edges → arcs (Python: topology/adjacency.py) ─────────────────────────────

const BENDSCRIPT_ALIASES = new Map([
  ['a', 'source_id'],
  ['b', 'target_id'],
  ['kind', 'relationship'],
]);

function canonicalKey(key) {
  const t = requireTable();
  return t.aliases.get(key) ?? BENDSCRIPT_ALIASES.get(key) ?? key;
}

/** [source, target, relationship|null, relationship field name] of one edge (any accepted form). */
export function edgeParts(position, edge) {
  if (Array.isArray(edge) && edge.length === 2) {
    return [
      checkId(`edges[${position}][0]`, edge[0]),
      checkId(`edges[${position}][1]`, edge[1]),
      null,
      `edges[${position}]`,
    ];
  }
  if (!isObject(edge)) {
    throw new ValidationError(
      `edges[${position}]`,
      'must be an edge object with source/target (or a/b) or a [source, target] pair',
    );
  }
  const fields = new Map();
  const spelled = new Map();
  const items = Object.entries(edge);
  if (isObject(edge.props) && 'kind' in edge.props) items.push(['props.kind', edge.props.kind]);
  for (const [key, value] of items) {
    const canonical = key === 'props.kind' ? 'relationship' : canonicalKey(key);
    if (fields.has(canonical) && !sameValue(fields.get(canonical), value)) {
      throw new ValidationError(`edges[${position}].${key}`, `conflicts with '${spelled.get(canonical)}'`);
    }
    fields.set(canonical, value);
    if (!spelled.has(canonical)) spelled.set(canonical, key);
  }
  const ends = [];
  for (const [canonical, plain] of [['source_id', 'source'], ['target_id', 'target']]) {
    if (!fields.has(canonical)) throw new ValidationError(`edges[${position}].${plain}`, 'is missing');
    ends.push(checkId(`edges[${position}].${spelled.get(canonical)}`, fields.get(canonical)));
  }
  let relationship = fields.has('relationship') ? fields.get('relationship') : null;
  const relField = `edges[${position}].${spelled.get('relationship') ?? 'relationship'}`;
  if (relationship !== null && typeof relationship !== 'string') {
    throw new ValidationError(relField, `must be a string; got ${pyTypeName(relationship)}`);
  }
  return [ends[0], ends[1], relationship, relField];
}

/** The κ arc [from, to] an edge contributes, or null when its kind is excluded. */
export function orient(source, target, relationship, field = 'relationship') {
  if (relationship === null || relationship === undefined) return [source, target];
  const t = requireTable();
  const direction = t.direction.get(relationship);
  if (direction === undefined) {
    if (!t.known.has(relationship)) {
      const allowed = sortedIds(t.known).join(', ');
      throw new ValidationError(field, `unknown relationship '${relationship}'; known: ${allowed}`);
    }
    return null;
  }
  return direction > 0 ? [source, target] : [target, source];
}

/** Adjacency (Map id → Set of targets, keys sorted) over a universe; self-loops and outside arcs dropped. */
export function adjacencyOver(universe, arcs) {
  const adjacency = new Map();
  for (const id of sortedIds(new Set(universe))) adjacency.set(id, new Set());
  for (const [s, t] of arcs) {
    if (s !== t && adjacency.has(s) && adjacency.has(t)) adjacency.get(s).add(t);
  }
  return adjacency;
}

function normalizeEdges(edges) {
  const endpoints = [];
  const arcs = [];
  edges.forEach((edge, position) => {
    const [s, t, rel, field] = edgeParts(position, edge);
    endpoints.push(s, t);
    const arc = orient(s, t, rel, field);
    if (arc !== null) arcs.push(arc);
  });
  return { endpoints, arcs };
}

/**
 * The κ digraph of a {"nodes", "edges"} document (a BendScript plane works as-is):
 * universe = listed nodes (ids or objects with id) ∪ every edge endpoint.
 */
export function adjacencyFromDocument(doc) {
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch (err) {
      throw new ValidationError('doc', `is not valid JSON (${err.message})`);
    }
  }
  if (!isObject(doc)) throw new ValidationError('doc', 'must be an object with nodes and edges');
  const nodes = 'nodes' in doc ? doc.nodes : [];
  const edges = 'edges' in doc ? doc.edges : [];
  if (!Array.isArray(nodes)) throw new ValidationError('nodes', 'must be a list');
  if (!Array.isArray(edges)) throw new ValidationError('edges', 'must be a list');
  const universe = nodes.map((node, i) =>
    isObject(node) ? checkId(`nodes[${i}].id`, node.id) : checkId(`nodes[${i}]`, node),
  );
  const { endpoints, arcs } = normalizeEdges(edges);
  return adjacencyOver(universe.concat(endpoints), arcs);
}

/** Exactly `nodeIds` as the universe; arcs with an endpoint outside are dropped (Python: build_adjacency). */
export function buildAdjacency(nodeIds, edges) {
  const { arcs } = normalizeEdges(edges);
  return adjacencyOver(nodeIds, arcs);
}

/** A fresh, normalised copy of an adjacency (Map or plain object of id → iterable). */
export function normalizeAdjacency(adjacency) {
  const entries = adjacency instanceof Map ? adjacency.entries() : Object.entries(adjacency);
  const universe = [];
  const arcs = [];
  for (const [s, targets] of entries) {
    if (typeof targets === 'string' || targets === null || typeof targets[Symbol.iterator] !== 'function') {
      throw new ValidationError(`adjacency['${s}']`, 'must be a set or list of node ids');
    }
    universe.push(s);
    for (const t of targets) {
      if (typeof t !== 'string') throw new ValidationError(`adjacency['${s}']`, 'node ids must be strings');
      universe.push(t);
      arcs.push([s, t]);
    }
  }
  return adjacencyOver(universe, arcs);
}

function asAdjacency(input) {
  if (input instanceof Map) return normalizeAdjacency(input);
  if (isObject(input) && ('nodes' in input || 'edges' in input)) return adjacencyFromDocument(input);
  if (Array.isArray(input)) return adjacencyFromDocument({ edges: input });
  if (isObject(input)) return normalizeAdjacency(input);
  throw new ValidationError('edges', 'must be an adjacency mapping, a {nodes, edges} document or a list of edges');
}

// ── strongly connected components (Python: topology/scc.py) ──────────────────

function indexGraph(adjacency) {
  const universe = new Set(adjacency.keys());
  for (const targets of adjacency.values()) for (const t of targets) universe.add(t);
  const nodes = sortedIds(universe);
  const position = new Map(nodes.map((id, i) => [id, i]));
  const successors = nodes.map(() => []);
  for (const [s, targets] of adjacency) {
    const i = position.get(s);
    const list = [];
    for (const t of new Set(targets)) if (t !== s) list.push(position.get(t));
    successors[i] = list.sort((x, y) => x - y);
  }
  return { nodes, successors };
}

function tarjanIndices(successors) {
  const n = successors.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const next = new Int32Array(n); // position in the successor list (the iterator of the frame)
  const stack = [];
  const components = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    const frames = [root];
    while (frames.length) {
      const v = frames[frames.length - 1];
      const succ = successors[v];
      let descended = false;
      while (next[v] < succ.length) {
        const w = succ[next[v]++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frames.push(w);
          descended = true;
          break;
        }
        if (onStack[w] && index[w] < low[v]) low[v] = index[w];
      }
      if (descended) continue;
      frames.pop();
      if (low[v] === index[v]) {
        const component = [];
        for (;;) {
          const w = stack.pop();
          onStack[w] = 0;
          component.push(w);
          if (w === v) break;
        }
        components.push(component);
      }
      if (frames.length) {
        const parent = frames[frames.length - 1];
        if (low[v] < low[parent]) low[parent] = low[v];
      }
    }
  }
  return components;
}

/**
 * All SCCs (trivial ones included) exactly as a recursive Tarjan visiting roots and
 * successors in sorted id order yields them: completion order, members in stack-pop
 * order.  Iterative.  Input: an adjacency Map, or (nodes, edges) as in a BendScript plane.
 */
export function tarjanSCC(nodesOrAdjacency, edges) {
  const adjacency =
    edges === undefined ? asAdjacency(nodesOrAdjacency) : adjacencyFromDocument({ nodes: nodesOrAdjacency, edges });
  const { nodes, successors } = indexGraph(adjacency);
  return tarjanIndices(successors).map((c) => c.map((i) => nodes[i]));
}

// ── κ of one SCC (Python: topology/kappa.py; the same steps, the same work counts) ──

class Csr {
  constructor(adjacency, members) {
    const position = new Map(members.map((id, i) => [id, i]));
    const n = members.length;
    this.n = n;
    const outStart = [0];
    const head = [];
    const tail = [];
    for (let u = 0; u < n; u++) {
      const targets = new Set();
      for (const t of adjacency.get(members[u]) ?? []) {
        const j = position.get(t);
        if (j !== undefined && j !== u) targets.add(j);
      }
      for (const j of Array.from(targets).sort((x, y) => x - y)) {
        head.push(j);
        tail.push(u);
      }
      outStart.push(head.length);
    }
    this.m = head.length;
    this.head = Int32Array.from(head);
    this.tail = Int32Array.from(tail);
    this.outStart = Int32Array.from(outStart);
    const counts = new Int32Array(n + 1);
    for (let e = 0; e < this.m; e++) counts[this.head[e] + 1]++;
    for (let i = 0; i < n; i++) counts[i + 1] += counts[i];
    this.inStart = Int32Array.from(counts);
    this.inArcs = new Int32Array(this.m);
    const fill = counts.slice();
    for (let e = 0; e < this.m; e++) this.inArcs[fill[this.head[e]]++] = e;
  }

  outDegree(u) {
    return this.outStart[u + 1] - this.outStart[u];
  }

  inDegree(u) {
    return this.inStart[u + 1] - this.inStart[u];
  }
}

function reach(g, start, forward) {
  const seen = new Uint8Array(g.n);
  seen[start] = 1;
  const queue = [start];
  let steps = 0;
  for (let q = 0; q < queue.length; q++) {
    const u = queue[q];
    if (forward) {
      steps += g.outDegree(u);
      for (let e = g.outStart[u]; e < g.outStart[u + 1]; e++) {
        const w = g.head[e];
        if (!seen[w]) {
          seen[w] = 1;
          queue.push(w);
        }
      }
    } else {
      steps += g.inDegree(u);
      for (let k = g.inStart[u]; k < g.inStart[u + 1]; k++) {
        const w = g.tail[g.inArcs[k]];
        if (!seen[w]) {
          seen[w] = 1;
          queue.push(w);
        }
      }
    }
  }
  return { seen, steps };
}

function residualReach(g, flow, s) {
  const seen = new Uint8Array(g.n);
  seen[s] = 1;
  const queue = [s];
  let steps = 0;
  for (let q = 0; q < queue.length; q++) {
    const u = queue[q];
    steps += g.outDegree(u) + g.inDegree(u);
    for (let e = g.outStart[u]; e < g.outStart[u + 1]; e++) {
      const w = g.head[e];
      if (!flow[e] && !seen[w]) {
        seen[w] = 1;
        queue.push(w);
      }
    }
    for (let k = g.inStart[u]; k < g.inStart[u + 1]; k++) {
      const e = g.inArcs[k];
      const w = g.tail[e];
      if (flow[e] && !seen[w]) {
        seen[w] = 1;
        queue.push(w);
      }
    }
  }
  return { seen, steps };
}

/** Bidirectional BFS augmenting paths for unit-capacity flows (Python: _PathFinder). */
class PathFinder {
  constructor(g) {
    this.g = g;
    this.markF = new Int32Array(g.n);
    this.markB = new Int32Array(g.n);
    this.parF = new Int32Array(g.n);
    this.parB = new Int32Array(g.n);
    this.stamp = 0;
  }

  /** Push one unit s→t if possible; returns [pushed, arcs inspected]. */
  augment(flow, s, t) {
    const { head, tail, inArcs, outStart, inStart } = this.g;
    const { markF, markB, parF, parB } = this;
    const stamp = ++this.stamp;
    markF[s] = stamp;
    markB[t] = stamp;
    let frontF = [s];
    let frontB = [t];
    let steps = 0;
    let meet = -1;
    while (frontF.length && frontB.length && meet < 0) {
      if (frontF.length <= frontB.length) {
        const grown = [];
        outer: for (const u of frontF) {
          const lo = outStart[u], hi = outStart[u + 1], ilo = inStart[u], ihi = inStart[u + 1];
          steps += hi - lo + ihi - ilo;
          for (let e = lo; e < hi; e++) {
            const w = head[e];
            if (!flow[e] && markF[w] !== stamp) {
              markF[w] = stamp;
              parF[w] = e;
              if (markB[w] === stamp) {
                meet = w;
                break outer;
              }
              grown.push(w);
            }
          }
          for (let k = ilo; k < ihi; k++) {
            const e = inArcs[k];
            const w = tail[e];
            if (flow[e] && markF[w] !== stamp) {
              markF[w] = stamp;
              parF[w] = ~e;
              if (markB[w] === stamp) {
                meet = w;
                break outer;
              }
              grown.push(w);
            }
          }
        }
        frontF = grown;
      } else {
        const grown = [];
        outer: for (const w of frontB) {
          const lo = inStart[w], hi = inStart[w + 1], olo = outStart[w], ohi = outStart[w + 1];
          steps += hi - lo + ohi - olo;
          for (let k = lo; k < hi; k++) {
            const e = inArcs[k];
            const u = tail[e];
            if (!flow[e] && markB[u] !== stamp) {
              markB[u] = stamp;
              parB[u] = e;
              if (markF[u] === stamp) {
                meet = u;
                break outer;
              }
              grown.push(u);
            }
          }
          for (let e = olo; e < ohi; e++) {
            const u = head[e];
            if (flow[e] && markB[u] !== stamp) {
              markB[u] = stamp;
              parB[u] = ~e;
              if (markF[u] === stamp) {
                meet = u;
                break outer;
              }
              grown.push(u);
            }
          }
        }
        frontB = grown;
      }
    }
    if (meet < 0) return [false, steps];
    let v = meet;
    while (v !== s) {
      const p = parF[v];
      if (p >= 0) {
        flow[p] = 1;
        v = tail[p];
      } else {
        flow[~p] = 0;
        v = head[~p];
      }
    }
    v = meet;
    while (v !== t) {
      const p = parB[v];
      if (p >= 0) {
        flow[p] = 1;
        v = head[p];
      } else {
        flow[~p] = 0;
        v = tail[~p];
      }
    }
    return [true, steps];
  }
}

function greedyShortPaths(g, flow, s, t, limit) {
  // intoT[x] = the arc x→t, or -1 (scratch array reused across calls, reset before returning).
  const intoT = g.intoT ?? (g.intoT = new Int32Array(g.n).fill(-1));
  for (let k = g.inStart[t]; k < g.inStart[t + 1]; k++) intoT[g.tail[g.inArcs[k]]] = g.inArcs[k];
  let value = 0;
  for (let e = g.outStart[s]; e < g.outStart[s + 1]; e++) {
    if (value >= limit) break;
    const x = g.head[e];
    if (x === t) {
      flow[e] = 1;
      value++;
    } else {
      const e2 = intoT[x];
      if (e2 >= 0) {
        flow[e] = flow[e2] = 1;
        value++;
      }
    }
  }
  for (let k = g.inStart[t]; k < g.inStart[t + 1]; k++) intoT[g.tail[g.inArcs[k]]] = -1;
  return [value, g.outDegree(s) + g.inDegree(t)];
}

function cutResult(members, g, side, kappa) {
  const faultLineEdges = [];
  for (let e = 0; e < g.m; e++) {
    if (side[g.tail[e]] && !side[g.head[e]]) {
      faultLineEdges.push({ source: members[g.tail[e]], target: members[g.head[e]] });
    }
  }
  const a = [];
  const b = [];
  for (let i = 0; i < g.n; i++) (side[i] ? a : b).push(members[i]);
  return { kappa, approximate: false, faultLineEdges, minCutPartition: [a, b] };
}

function approximateResult(bound) {
  return { kappa: bound, approximate: true, faultLineEdges: [], minCutPartition: null };
}

function exactKappa(members, g, workBudget) {
  const n = g.n;
  let steps = 0;
  const fwd = reach(g, 0, true);
  const bwd = reach(g, 0, false);
  steps += fwd.steps + bwd.steps;
  if (!fwd.seen.every(Boolean)) return [cutResult(members, g, fwd.seen, 0), steps];
  if (!bwd.seen.every(Boolean)) return [cutResult(members, g, bwd.seen.map((x) => (x ? 0 : 1)), 0), steps];
  let best = n;
  let pick = 0;
  let pickOut = true;
  for (let u = 0; u < n; u++) {
    if (g.outDegree(u) < best) {
      best = g.outDegree(u);
      pick = u;
      pickOut = true;
    }
    if (g.inDegree(u) < best) {
      best = g.inDegree(u);
      pick = u;
      pickOut = false;
    }
  }
  let bestSide = new Uint8Array(n);
  for (let i = 0; i < n; i++) bestSide[i] = (i === pick) === pickOut ? 1 : 0;
  const finder = new PathFinder(g);
  for (let i = 0; i < n; i++) {
    if (best === 1) break;
    if (workBudget !== null && steps > workBudget) return [approximateResult(best), steps];
    const s = i;
    const t = (i + 1) % n;
    const flow = new Uint8Array(g.m);
    let [value, cost] = greedyShortPaths(g, flow, s, t, best);
    steps += cost;
    while (value < best) {
      if (workBudget !== null && steps > workBudget) return [approximateResult(best), steps];
      const [pushed, c] = finder.augment(flow, s, t);
      steps += c;
      if (!pushed) {
        const r = residualReach(g, flow, s);
        bestSide = r.seen;
        best = value;
        steps += r.steps;
        break;
      }
      value++;
    }
  }
  return [cutResult(members, g, bestSide, best), steps];
}

/**
 * κ of one SCC: the arc-strong connectivity of its induced sub-digraph (SPEC §5.3.1),
 * exact at every size unless `workBudget` arc inspections run out (then approximate:
 * κ = the best upper bound, no fault lines).  Output (camelCase):
 * {kappa, approximate, faultLineEdges: [{source, target}] sorted, minCutPartition: [A, B] | null}.
 */
export function computeKappa(adjacency, sccNodeIds, { workBudget = DEFAULT_WORK_BUDGET } = {}) {
  const adj = adjacency instanceof Map ? adjacency : asAdjacency(adjacency);
  const members = sortedIds(new Set(sccNodeIds));
  if (members.length <= 1) return { kappa: 0, approximate: false, faultLineEdges: [], minCutPartition: null };
  return exactKappa(members, new Csr(adj, members), workBudget)[0];
}

/** Arc inspections computeKappa needs for this SCC, unbudgeted (Python: kappa_work). */
export function kappaWork(adjacency, sccNodeIds) {
  const members = sortedIds(new Set(sccNodeIds));
  if (members.length <= 1) return 0;
  return exactKappa(members, new Csr(adjacency, members), null)[1];
}

// ── budget, routing, analysis, preview (Python: topology/analysis.py) ─────────

function round10(x) {
  return Number(x.toFixed(BUDGET_DIGITS));
}

/** Inference parameters for an SCC with κ (capped: min(κ+1,4), min(κ,3), min(1+0.5κ,3.5), min(0.7+0.05κ,0.95)). */
export function deliberationBudget(kappa, { capped = true } = {}) {
  if (!Number.isInteger(kappa) || kappa < 0) {
    throw new ValidationError('kappa', `must be a non-negative integer; got ${kappa}`);
  }
  let iterations = kappa + 1;
  let timeout = 1.0 + 0.5 * kappa;
  let confidence = 0.7 + 0.05 * kappa;
  if (capped) {
    iterations = Math.min(iterations, 4);
    timeout = Math.min(timeout, 3.5);
    confidence = Math.min(confidence, 0.95);
  }
  return {
    maxIterations: iterations,
    agentCount: Math.min(kappa, 3),
    timeoutMultiplier: round10(timeout),
    confidenceThreshold: round10(confidence),
  };
}

/** "fast" when no feedback loop (maxKappa 0), else "deliberate". */
export function route(result) {
  return result.maxKappa === 0 ? 'fast' : 'deliberate';
}

function comparePairs(x, y) {
  return compareIds(x.source, y.source) || compareIds(x.target, y.target);
}

/**
 * Topology of a graph: a BendScript plane / {"nodes","edges"} document, an edge list,
 * or an adjacency Map.  Output (camelCase, canonical order): {sccs: [{id, nodes, kappa,
 * approximate, faultLineEdges, routing, deliberationBudget}], dagNodes, routing, maxKappa, sccCount}.
 */
export function analyzeTopology(input, { workBudget = DEFAULT_WORK_BUDGET } = {}) {
  const adjacency = asAdjacency(input);
  const components = tarjanSCC(adjacency)
    .filter((c) => c.length > 1)
    .map((c) => sortedIds(c))
    .sort((x, y) => compareIds(x[0], y[0]));
  const sccs = components.map((nodes, i) => {
    const k = computeKappa(adjacency, nodes, { workBudget });
    return {
      id: `scc-${i}`,
      nodes,
      kappa: k.kappa,
      approximate: k.approximate,
      faultLineEdges: k.faultLineEdges.slice().sort(comparePairs),
      routing: k.kappa > 0 ? 'deliberate' : 'fast',
      deliberationBudget: deliberationBudget(k.kappa),
    };
  });
  const inCycles = new Set(components.flat());
  const maxKappa = sccs.reduce((m, s) => Math.max(m, s.kappa), 0);
  return {
    sccs,
    dagNodes: Array.from(adjacency.keys()).filter((id) => !inCycles.has(id)),
    routing: maxKappa === 0 ? 'fast' : 'deliberate',
    maxKappa,
    sccCount: sccs.length,
  };
}

function describe(src, dst, creates, enlarges, before, after) {
  const arc = `Adding ${src}→${dst}`;
  const change = `(κ ${before}→${after})`;
  if (creates) return `${arc} creates a new feedback loop ${change}.`;
  if (enlarges) return `${arc} enlarges an existing feedback loop ${change}.`;
  if (after !== before) return `${arc} changes the feedback structure ${change}.`;
  return `${arc} leaves the feedback structure unchanged ${change}.`;
}

/**
 * What adding src→dst would do, on copies (the input is never mutated).  Output
 * (camelCase): {createsNewSCC, enlargesExistingSCC, kappaBefore, kappaAfter, kappaDelta, description}.
 * `before` may pass an already computed analysis of the same graph (the canvas cache).
 */
export function previewEdgeImpact(input, src, dst, { workBudget = DEFAULT_WORK_BUDGET, before = null } = {}) {
  for (const [name, value] of [['src', src], ['dst', dst]]) {
    if (typeof value !== 'string' || value.length === 0) throw new ValidationError(name, 'must be a non-empty node id');
  }
  const beforeGraph = asAdjacency(input);
  const grew = !beforeGraph.has(src) || !beforeGraph.has(dst);
  for (const id of [src, dst]) if (!beforeGraph.has(id)) beforeGraph.set(id, new Set());
  const afterGraph = new Map();
  for (const [id, targets] of beforeGraph) afterGraph.set(id, new Set(targets));
  if (src !== dst) afterGraph.get(src).add(dst);
  const b = before && !grew ? before : analyzeTopology(beforeGraph, { workBudget });
  const a = analyzeTopology(afterGraph, { workBudget });
  const creates = a.sccCount > b.sccCount;
  let enlarges = false;
  if (!creates) {
    const sizeAfter = new Map();
    for (const scc of a.sccs) for (const id of scc.nodes) sizeAfter.set(id, scc.nodes.length);
    enlarges = b.sccs.some((scc) => (sizeAfter.get(scc.nodes[0]) ?? 0) > scc.nodes.length);
  }
  return {
    createsNewSCC: creates,
    enlargesExistingSCC: enlarges,
    kappaBefore: b.maxKappa,
    kappaAfter: a.maxKappa,
    kappaDelta: a.maxKappa - b.maxKappa,
    description: describe(src, dst, creates, enlarges, b.maxKappa, a.maxKappa),
  };
}

/**
 * The language-neutral command (Python: topology/document.py): a {"nodes","edges"[,"preview"]}
 * document → the analysis, or the preview when `preview` is given.  camelCase result.
 */
export function analyzeDocument(document) {
  if (!isObject(document)) throw new ValidationError('document', 'must be an object {"nodes": [...], "edges": [...]}');
  const adjacency = adjacencyFromDocument({ nodes: document.nodes ?? [], edges: document.edges ?? [] });
  const wanted = document.preview;
  if (wanted !== undefined && wanted !== null) {
    if (!isObject(wanted) || typeof wanted.source !== 'string' || typeof wanted.target !== 'string') {
      throw new ValidationError('preview', 'must be {"source": ID, "target": ID}');
    }
    return previewEdgeImpact(adjacency, wanted.source, wanted.target);
  }
  return analyzeTopology(adjacency);
}

// ── the schema boundary: camelCase inside, canonical snake_case outside ───────

/** Every camelCase key this engine produces and its canonical name (seed 000 §A.1). */
export const CANONICAL_KEYS = Object.freeze({
  dagNodes: 'dag_nodes',
  maxKappa: 'max_kappa',
  sccCount: 'scc_count',
  faultLineEdges: 'fault_line_edges',
  deliberationBudget: 'deliberation_budget',
  maxIterations: 'max_iterations',
  agentCount: 'agent_count',
  timeoutMultiplier: 'timeout_multiplier',
  confidenceThreshold: 'confidence_threshold',
  minCutPartition: 'min_cut_partition',
  createsNewSCC: 'creates_new_scc',
  enlargesExistingSCC: 'enlarges_existing_scc',
  kappaBefore: 'kappa_before',
  kappaAfter: 'kappa_after',
  kappaDelta: 'kappa_delta',
});

/**
 * The one camelCase → snake_case mapper for anything sent or saved.  Keys without an
 * uppercase letter pass through; an unknown camelCase key is an error (never guessed).
 * Node ids are values, never keys, so they are never rewritten.
 */
export function toCanonical(value) {
  if (Array.isArray(value)) return value.map(toCanonical);
  if (!isObject(value)) return value;
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    let name = key;
    if (/[A-Z]/.test(key)) {
      name = CANONICAL_KEYS[key];
      if (name === undefined) throw new ValidationError(key, 'has no canonical snake_case name');
    }
    out[name] = toCanonical(v);
  }
  return out;
}

/** Canonical keys whose values are floats (Python prints 1.0, JavaScript would print 1). */
const FLOAT_KEYS = new Set(['timeout_multiplier', 'confidence_threshold']);

function pyFloat(x) {
  if (!Number.isFinite(x)) throw new ValidationError('number', 'NaN and Infinity are not JSON');
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

/**
 * Canonical JSON text, byte-identical to Python's json.dumps(ensure_ascii=False) with
 * `indent` (2 in the CLI; null = compact with Python's default ", " / ": " separators
 * replaced by "," / ":" like separators=(",", ":")).
 */
export function canonicalJSON(value, indent = 2) {
  const write = (v, depth, key) => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'number') return FLOAT_KEYS.has(key) ? pyFloat(v) : String(v);
    if (typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
    const pad = indent === null ? '' : '\n' + ' '.repeat(indent * (depth + 1));
    const end = indent === null ? '' : '\n' + ' '.repeat(indent * depth);
    const sep = indent === null ? ':' : ': ';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return '[' + v.map((x) => pad + write(x, depth + 1, key)).join(',') + end + ']';
    }
    const entries = Object.entries(v);
    if (entries.length === 0) return '{}';
    return '{' + entries.map(([k, x]) => pad + JSON.stringify(k) + sep + write(x, depth + 1, k)).join(',') + end + '}';
  };
  return write(value, 0, null);
}
