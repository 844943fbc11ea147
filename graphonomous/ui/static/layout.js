// Force-directed layout (BendScript's simulate(dt)): repulsion between all nodes, springs along
// edges, a weak pull to the centre, velocity damping.  O(n²) per step, which is why a view holds
// at most max_view_nodes nodes (see graphonomous/ui/views.py).
//
// Rules: pure functions over the plane's nodes (no DOM); `alpha` cools the simulation so a
// layout settles and stops costing frames; dragging re-heats it.

const REPULSION = 26000; // px² · strength: boxes are ~26 × 40–200 px
const SPRING_LENGTH = 170; // rest length of an edge
const GAP = 14; // px kept between two boxes by the collision pass
const SPRING = 0.035;
const GRAVITY = 0.012;
const DAMPING = 0.82;
const MAX_SPEED = 40;
export const ALPHA_MIN = 0.002;
const ALPHA_DECAY = 0.985;

/** One simulation step; returns the new alpha (0 when the layout has settled). */
export function simulate(plane, alpha) {
  if (alpha < ALPHA_MIN) return 0;
  const nodes = plane.nodes;
  const n = nodes.length;
  for (const node of nodes) {
    node.fx = -node.x * GRAVITY;
    node.fy = -node.y * GRAVITY;
  }
  for (let i = 0; i < n; i++) {
    const p = nodes[i];
    for (let j = i + 1; j < n; j++) {
      const q = nodes[j];
      let dx = p.x - q.x;
      let dy = p.y - q.y;
      let d2 = dx * dx + dy * dy;
      if (d2 < 1) {
        dx = (i - j) * 0.5 + 0.1;
        dy = 0.3;
        d2 = dx * dx + dy * dy;
      }
      const f = REPULSION / d2;
      const d = Math.sqrt(d2);
      const fx = (dx / d) * f;
      const fy = (dy / d) * f;
      p.fx += fx;
      p.fy += fy;
      q.fx -= fx;
      q.fy -= fy;
    }
  }
  const byId = plane._byId;
  for (const e of plane.edges) {
    const a = byId.get(e.a);
    const b = byId.get(e.b);
    if (!a || !b || a === b) continue;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const d = Math.sqrt(dx * dx + dy * dy) || 1;
    const f = (d - SPRING_LENGTH) * SPRING;
    const fx = (dx / d) * f;
    const fy = (dy / d) * f;
    a.fx += fx;
    a.fy += fy;
    b.fx -= fx;
    b.fy -= fy;
  }
  for (const node of nodes) {
    if (node.pinned) {
      node.vx = node.vy = 0;
      continue;
    }
    node.vx = (node.vx + node.fx * alpha) * DAMPING;
    node.vy = (node.vy + node.fy * alpha) * DAMPING;
    const speed = Math.hypot(node.vx, node.vy);
    if (speed > MAX_SPEED) {
      node.vx *= MAX_SPEED / speed;
      node.vy *= MAX_SPEED / speed;
    }
    node.x += node.vx;
    node.y += node.vy;
  }
  separate(nodes);
  plane.tick += 1;
  return alpha * ALPHA_DECAY;
}

/** Push overlapping boxes apart along the axis of least overlap (half each; pinned nodes stay). */
function separate(nodes) {
  const n = nodes.length;
  for (let i = 0; i < n; i++) {
    const p = nodes[i];
    for (let j = i + 1; j < n; j++) {
      const q = nodes[j];
      const ox = (p.width + q.width) / 2 + GAP - Math.abs(p.x - q.x);
      const oy = (p.height + q.height) / 2 + GAP - Math.abs(p.y - q.y);
      if (ox <= 0 || oy <= 0) continue;
      const share = p.pinned || q.pinned ? 1 : 0.5;
      if (ox < oy) {
        const s = (p.x < q.x ? -1 : 1) * ox * share;
        if (!p.pinned) p.x += s;
        if (!q.pinned) q.x -= s;
      } else {
        const s = (p.y < q.y ? -1 : 1) * oy * share;
        if (!p.pinned) p.y += s;
        if (!q.pinned) q.y -= s;
      }
    }
  }
}

/** Run the layout to rest without drawing (bounded), e.g. after loading a view. */
export function settle(plane, steps = 300) {
  let alpha = 1;
  for (let i = 0; i < steps && alpha > 0; i++) alpha = simulate(plane, alpha);
}
