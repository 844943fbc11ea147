// Drawing (BendScript's renderer): background, then drawTopology (SCC halos + κ badges), then
// edges (fault lines dashed), then nodes (SCC members pulse).  Reads plane._topologyCache only
// through getTopology(), so drawing never recomputes κ unless the dirty flag is set.
//
// Rules: every colour and size the seed names is a constant here, with the seed's value.
import { edgeArc, getTopology, isFaultLine, sccOfNode } from './graph.js';

export const BACKGROUND = '#0b0f14';
export const HALO_PADDING = 30; // seed 000 Task 2.3: 30 px around the SCC's bounding box
export const HALO_RADIUS = 16; // corner radius
export const HALO_FILL = Object.freeze({ 1: 'rgba(0, 255, 200, 0.06)', 2: 'rgba(0, 200, 255, 0.08)', 3: 'rgba(180, 100, 255, 0.10)' });
const HALO_STROKE = Object.freeze({ 1: 'rgba(0, 255, 200, 0.22)', 2: 'rgba(0, 200, 255, 0.26)', 3: 'rgba(180, 100, 255, 0.30)' });
export const FAULT_DASH = Object.freeze([6, 4]);
export const FAULT_COLOR = 'rgba(0, 255, 200, 0.6)';
const EDGE_COLOR = 'rgba(130, 150, 175, 0.45)';
const SYMMETRIC_EDGE_COLOR = 'rgba(130, 150, 175, 0.22)';
const BADGE_FILL = 'rgba(0, 0, 0, 0.6)';
const NODE_FILL = Object.freeze({
  episodic: '#1b2a3a', semantic: '#1d2b24', procedural: '#2b2540', temporal: '#33291c', outcome: '#3a1f26', goal: '#2c3320', canvas: '#222831',
});
const PULSE_COLOR = [0, 204, 255];

function haloLevel(kappa) {
  return kappa >= 3 ? 3 : kappa;
}

/** Screen-space bounding boxes of the SCC halos (also used by tests through canvasApp). */
export function haloBoxes(plane, toScreen) {
  const topo = getTopology(plane);
  const boxes = [];
  for (const scc of topo.sccs) {
    if (scc.kappa <= 0) continue;
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const id of scc.nodes) {
      const n = plane._byId.get(id);
      if (!n) continue;
      minX = Math.min(minX, n.x - n.width / 2);
      maxX = Math.max(maxX, n.x + n.width / 2);
      minY = Math.min(minY, n.y - n.height / 2);
      maxY = Math.max(maxY, n.y + n.height / 2);
    }
    if (minX === Infinity) continue;
    const [x0, y0] = toScreen(minX - HALO_PADDING, minY - HALO_PADDING);
    const [x1, y1] = toScreen(maxX + HALO_PADDING, maxY + HALO_PADDING);
    boxes.push({ id: scc.id, kappa: scc.kappa, x: x0, y: y0, w: x1 - x0, h: y1 - y0 });
  }
  return boxes;
}

export function drawBackground(ctx, W, H) {
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, W, H);
}

/** SCC halos (fill by κ, 30 px padding, 16 px corners) and κ badge pills. */
export function drawTopology(ctx, plane, toScreen, zoom) {
  for (const box of haloBoxes(plane, toScreen)) {
    const level = haloLevel(box.kappa);
    ctx.beginPath();
    ctx.roundRect(box.x, box.y, box.w, box.h, HALO_RADIUS * zoom);
    ctx.fillStyle = HALO_FILL[level];
    ctx.fill();
    ctx.lineWidth = 1;
    ctx.strokeStyle = HALO_STROKE[level];
    ctx.stroke();
    const text = `κ=${box.kappa}`;
    ctx.font = '10px ui-monospace, SFMono-Regular, Menlo, monospace';
    const tw = ctx.measureText(text).width;
    const pw = tw + 12;
    const ph = 16;
    const px = box.x + box.w - pw - 6;
    const py = box.y + 6;
    ctx.beginPath();
    ctx.roundRect(px, py, pw, ph, ph / 2);
    ctx.fillStyle = BADGE_FILL;
    ctx.fill();
    ctx.fillStyle = '#ffffff';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    ctx.fillText(text, px + 6, py + ph / 2 + 0.5);
  }
}

function borderPoint(n, tx, ty) {
  // Where the segment from the centre of n towards (tx, ty) leaves n's box.
  const dx = tx - n.x;
  const dy = ty - n.y;
  const sx = dx === 0 ? Infinity : n.width / 2 / Math.abs(dx);
  const sy = dy === 0 ? Infinity : n.height / 2 / Math.abs(dy);
  const s = Math.min(sx, sy, 1);
  return [n.x + dx * s, n.y + dy * s];
}

const RECIPROCAL_OFFSET = 4; // px between the two lines of an arc pair a→b, b→a

/** Edge geometry in world space: from border to border along the κ arc direction (or a→b);
 *  when the reverse pair is also drawn, both lines move RECIPROCAL_OFFSET to their right. */
export function edgeSegment(plane, edge, pairs = null) {
  const arc = edgeArc(edge);
  const [from, to] = arc ?? [edge.a, edge.b];
  const a = plane._byId.get(from);
  const b = plane._byId.get(to);
  if (!a || !b) return null;
  let p = borderPoint(a, b.x, b.y);
  let q = borderPoint(b, a.x, a.y);
  if (pairs && pairs.has(`${to}\u0000${from}`)) {
    const len = Math.hypot(q[0] - p[0], q[1] - p[1]) || 1;
    const nx = (-(q[1] - p[1]) / len) * RECIPROCAL_OFFSET;
    const ny = ((q[0] - p[0]) / len) * RECIPROCAL_OFFSET;
    p = [p[0] + nx, p[1] + ny];
    q = [q[0] + nx, q[1] + ny];
  }
  return { from: p, to: q, directed: arc !== null };
}

/** The set of drawn (from, to) pairs, for spotting reciprocal arcs. */
export function drawnPairs(plane) {
  const pairs = new Set();
  for (const edge of plane.edges) {
    const [from, to] = edgeArc(edge) ?? [edge.a, edge.b];
    pairs.add(`${from}\u0000${to}`);
  }
  return pairs;
}

export function drawEdges(ctx, plane, toScreen, zoom) {
  const pairs = drawnPairs(plane);
  for (const edge of plane.edges) {
    const seg = edgeSegment(plane, edge, pairs);
    if (!seg) continue;
    const fault = isFaultLine(plane, edge);
    const [x0, y0] = toScreen(...seg.from);
    const [x1, y1] = toScreen(...seg.to);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    if (fault) {
      ctx.setLineDash(FAULT_DASH);
      ctx.strokeStyle = FAULT_COLOR;
      ctx.lineWidth = 2;
    } else {
      ctx.strokeStyle = seg.directed ? EDGE_COLOR : SYMMETRIC_EDGE_COLOR;
      ctx.lineWidth = 1.25;
    }
    ctx.stroke();
    ctx.setLineDash([]);
    if (seg.directed) {
      const angle = Math.atan2(y1 - y0, x1 - x0);
      const size = Math.max(4, 7 * zoom);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - size * Math.cos(angle - 0.4), y1 - size * Math.sin(angle - 0.4));
      ctx.lineTo(x1 - size * Math.cos(angle + 0.4), y1 - size * Math.sin(angle + 0.4));
      ctx.closePath();
      ctx.fillStyle = fault ? FAULT_COLOR : EDGE_COLOR;
      ctx.fill();
    }
  }
}

export function drawNodes(ctx, plane, toScreen, zoom, selectedId, now) {
  const pulse = Math.sin(now / 1000) * 0.3 + 0.7; // seed 000 Task 2.3
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.font = `${Math.max(8, Math.round(11 * zoom))}px ui-monospace, SFMono-Regular, Menlo, monospace`;
  for (const n of plane.nodes) {
    const [x, y] = toScreen(n.x - n.width / 2, n.y - n.height / 2);
    const w = n.width * zoom;
    const h = n.height * zoom;
    const scc = sccOfNode(plane, n.id);
    n.pulse = scc && scc.kappa > 0 ? pulse : 0;
    ctx.beginPath();
    ctx.roundRect(x, y, w, h, 6 * zoom);
    ctx.fillStyle = NODE_FILL[n.data?.node_type ?? 'canvas'] ?? NODE_FILL.canvas;
    ctx.fill();
    if (n.pulse > 0) {
      ctx.strokeStyle = `rgba(${PULSE_COLOR.join(', ')}, ${n.pulse.toFixed(3)})`;
      ctx.lineWidth = 1 + n.pulse;
    } else {
      ctx.strokeStyle = 'rgba(150, 170, 190, 0.5)';
      ctx.lineWidth = 1;
    }
    if (n.id === selectedId) {
      ctx.strokeStyle = '#ffd166';
      ctx.lineWidth = 2;
    }
    ctx.stroke();
    if (zoom > 0.35) {
      ctx.fillStyle = '#d8e1ea';
      ctx.fillText(n.label, x + w / 2, y + h / 2 + 0.5);
    }
  }
}
