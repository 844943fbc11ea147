// node --test tests/js/ — unit tests of the JavaScript κ engine (graphonomous/ui/static/topology.js).
// Seed 000's Task 2.1 checklist, the schema boundary, and every shared fixture loaded directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '../../graphonomous/ui/static/topology.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tableDoc = JSON.parse(readFileSync(join(root, 'graphonomous/ui/static/relationships.json'), 'utf8'));
T.setRelationshipTable(tableDoc);

const causal = (pairs) => pairs.map(([a, b]) => ({ id: `${a}-${b}`, a, b, props: { kind: 'causal' } }));
const plane = (ids, pairs) => ({ nodes: ids.map((id) => ({ id, text: id })), edges: causal(pairs) });

test('tarjanSCC: empty graph, chain, cycle, disconnected', () => {
  assert.deepEqual(T.tarjanSCC([], []), []);
  const chain = T.tarjanSCC(['a', 'b', 'c'], causal([['a', 'b'], ['b', 'c']]));
  assert.ok(chain.every((c) => c.length === 1));
  const cycle = T.tarjanSCC(['a', 'b', 'c'], causal([['a', 'b'], ['b', 'c'], ['c', 'a']]));
  assert.deepEqual(cycle.map((c) => c.slice().sort()), [['a', 'b', 'c']]);
  const two = T.tarjanSCC(['a', 'b', 'x', 'y'], causal([['a', 'b'], ['b', 'a'], ['x', 'y'], ['y', 'x']]));
  assert.equal(two.filter((c) => c.length > 1).length, 2);
});

test('tarjanSCC is iterative: a 100,000-node path does not overflow the stack', () => {
  const adj = new Map();
  for (let i = 0; i < 100000; i++) adj.set(`n${i}`, new Set(i + 1 < 100000 ? [`n${i + 1}`] : []));
  assert.equal(T.tarjanSCC(adj).length, 100000);
});

test('computeKappa: trivial 0, 3-cycle 1, K2,2 both directions 2', () => {
  const tri = T.analyzeTopology(plane(['a', 'b', 'c'], [['a', 'b'], ['b', 'c'], ['c', 'a']]));
  assert.equal(tri.maxKappa, 1);
  assert.equal(tri.sccs[0].approximate, false);
  const adj = T.adjacencyFromDocument(plane(['a'], []));
  assert.equal(T.computeKappa(adj, ['a']).kappa, 0);
  const k22 = [];
  for (const x of ['a1', 'a2']) for (const y of ['b1', 'b2']) k22.push([x, y], [y, x]);
  assert.equal(T.analyzeTopology(plane(['a1', 'a2', 'b1', 'b2'], k22)).maxKappa, 2);
});

test('business example: κ 1, fault line product-quality→market-share, canonical snake_case out', () => {
  const pairs = [
    ['market-share', 'revenue'], ['revenue', 'r-and-d'], ['r-and-d', 'product-quality'],
    ['product-quality', 'market-share'], ['market-share', 'customer-retention'],
    ['customer-retention', 'market-share'], ['revenue', 'customer-retention'], ['customer-retention', 'revenue'],
  ];
  const result = T.toCanonical(T.analyzeTopology(plane(['founding-date'], pairs)));
  assert.deepEqual(Object.keys(result), ['sccs', 'dag_nodes', 'routing', 'max_kappa', 'scc_count']);
  assert.deepEqual(result.sccs[0].fault_line_edges, [{ source: 'product-quality', target: 'market-share' }]);
  assert.deepEqual(result.sccs[0].deliberation_budget, {
    max_iterations: 2, agent_count: 1, timeout_multiplier: 1.5, confidence_threshold: 0.75,
  });
  assert.deepEqual(result.dag_nodes, ['founding-date']);
  assert.equal(result.routing, 'deliberate');
});

test('SCCs larger than 20 nodes are exact (not the seed bitmask fallback)', () => {
  const ids = Array.from({ length: 25 }, (_, i) => `v${String(i).padStart(2, '0')}`);
  const pairs = [];
  for (let i = 0; i < 25; i++) pairs.push([ids[i], ids[(i + 1) % 25]], [ids[i], ids[(i + 2) % 25]]);
  const r = T.analyzeTopology(plane(ids, pairs));
  assert.equal(r.sccs[0].approximate, false);
  assert.equal(r.sccs[0].kappa, 2);
  assert.equal(r.sccs[0].faultLineEdges.length, 2);
});

test('a spent work budget gives an approximate upper bound without fault lines', () => {
  const ids = Array.from({ length: 30 }, (_, i) => `v${i}`);
  const pairs = [];
  for (let i = 0; i < 30; i++) for (const d of [1, 2, 3]) pairs.push([ids[i], ids[(i + d) % 30]]);
  const r = T.analyzeTopology(plane(ids, pairs), { workBudget: 10 });
  assert.equal(r.sccs[0].approximate, true);
  assert.deepEqual(r.sccs[0].faultLineEdges, []);
  assert.ok(r.sccs[0].kappa >= 3);
});

test('DIRECTED_KINDS: of the BendScript kinds only causal and temporal make arcs, as the exported table says', () => {
  for (const kind of ['causal', 'temporal', 'context', 'associative', 'user']) {
    const expected = T.DIRECTED_KINDS.includes(kind) ? 1 : 0;
    assert.equal(T.arcDirection(kind), expected, kind);
    assert.equal(tableDoc.kappa_arc_direction[kind] ?? 0, expected, kind);
  }
  const loop = { nodes: ['a', 'b'], edges: [{ a: 'a', b: 'b', props: { kind: 'context' } }, { a: 'b', b: 'a', props: { kind: 'user' } }] };
  assert.equal(T.analyzeTopology(loop).sccCount, 0);
  const inverse = { edges: [{ source: 'a', target: 'b', relationship: 'supersedes' }, { source: 'b', target: 'a', relationship: 'superseded_by' }] };
  assert.equal(T.analyzeTopology(inverse).sccCount, 0); // the same arc spelled twice never fakes a loop
});

test('previewEdgeImpact detects a new SCC and never mutates its input', () => {
  const p = plane(['a', 'b', 'c'], [['a', 'b'], ['b', 'c']]);
  const copy = JSON.stringify(p);
  const r = T.previewEdgeImpact(p, 'c', 'a');
  assert.equal(r.createsNewSCC, true);
  assert.equal(r.kappaBefore, 0);
  assert.equal(r.kappaAfter, 1);
  assert.equal(r.description, 'Adding c→a creates a new feedback loop (κ 0→1).');
  assert.equal(JSON.stringify(p), copy);
  assert.equal(T.previewEdgeImpact(p, 'a', 'c').kappaDelta, 0);
});

test('ids sort by code point, not UTF-16 units', () => {
  const ids = ['\u{1D538}', '\uE000', 'z', 'B', 'a'];
  assert.deepEqual(ids.slice().sort(T.compareIds), ['B', 'a', 'z', '\uE000', '\u{1D538}']);
});

test('toCanonical is explicit: an unknown camelCase key is an error', () => {
  assert.deepEqual(T.toCanonical({ maxKappa: 1, createsNewSCC: true, nodes: ['aB'] }), {
    max_kappa: 1, creates_new_scc: true, nodes: ['aB'],
  });
  assert.throws(() => T.toCanonical({ overallRouting: 'fast' }), /no canonical snake_case name/);
});

test('deliberationBudget caps and rejects bad κ', () => {
  assert.deepEqual(T.deliberationBudget(9), { maxIterations: 4, agentCount: 3, timeoutMultiplier: 3.5, confidenceThreshold: 0.95 });
  assert.deepEqual(T.deliberationBudget(0), { maxIterations: 1, agentCount: 0, timeoutMultiplier: 1, confidenceThreshold: 0.7 });
  assert.throws(() => T.deliberationBudget(-1), T.ValidationError);
  assert.throws(() => T.deliberationBudget(1.5), T.ValidationError);
});

test('every shared fixture, loaded directly, matches in exact mode', () => {
  let count = 0;
  for (const dir of ['topology', 'preview']) {
    for (const name of readdirSync(join(root, 'fixtures', dir)).sort()) {
      const fixture = JSON.parse(readFileSync(join(root, 'fixtures', dir, name), 'utf8'));
      assert.deepEqual(T.toCanonical(T.analyzeDocument(fixture.input)), fixture.expected, `${dir}/${name}`);
      count++;
    }
  }
  assert.ok(count >= 90);
});
