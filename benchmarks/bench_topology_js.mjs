// κ of the JavaScript engine (graphonomous/ui/static/topology.js) on the hardest family we know:
// a union of 10 random Hamiltonian cycles (seeded LCG), at 100 / 1,000 / 2,000 nodes.
//   node benchmarks/bench_topology_js.mjs [--json]
// Work counts (arc inspections) are deterministic and equal to the Python engine's kappa_work.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '../graphonomous/ui/static/topology.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
T.setRelationshipTable(JSON.parse(readFileSync(join(root, 'graphonomous/ui/static/relationships.json'), 'utf8')));

let state = 2026;
const random = () => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return state / 2147483648;
};

function hamiltonianUnion(n, cycles) {
  const adjacency = new Map();
  for (let i = 0; i < n; i++) adjacency.set(`v${i}`, new Set());
  for (let c = 0; c < cycles; c++) {
    const order = [...Array(n).keys()];
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (let i = 0; i < n; i++) adjacency.get(`v${order[i]}`).add(`v${order[(i + 1) % n]}`);
  }
  return adjacency;
}

const rows = [];
for (const n of [100, 1000, 2000]) {
  const adjacency = hamiltonianUnion(n, 10);
  const started = performance.now();
  const result = T.analyzeTopology(adjacency);
  const ms = performance.now() - started;
  rows.push({ nodes: n, kappa: result.maxKappa, ms: Number(ms.toFixed(1)), work: T.kappaWork(adjacency, result.sccs[0].nodes) });
}
if (process.argv.includes('--json')) console.log(JSON.stringify(rows, null, 2));
else for (const r of rows) console.log(`union of 10 Hamiltonian cycles, ${r.nodes} nodes: κ ${r.kappa} in ${r.ms} ms (work ${r.work})`);
