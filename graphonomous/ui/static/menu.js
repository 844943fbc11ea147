// The right-click menu (seed 000 Tasks 2.5–2.6): Connect to… with lazily computed κ previews,
// Bend — Create Feedback Loop on DAG nodes, Unbend — Break Feedback Loop on SCC nodes (with
// its confirmation), plus expand / details / pin.
//
// Rules: the seed's texts are used verbatim; previews are computed only when the Connect to…
// submenu opens; nothing here mutates the plane except through the `app` callbacks.
import { getTopology, kappaWithout, nodeById, nodesNear, previewOnPlane, sccOfNode, edgeArc } from './graph.js';

export const CONNECT_RADIUS = 500; // seed 000: candidates within 500 px world distance
export const TEXT = Object.freeze({
  connect: 'Connect to…',
  bend: 'Bend — Create Feedback Loop',
  noBend: 'No feedback loop possible nearby',
  unbend: 'Unbend — Break Feedback Loop',
  expand: 'Expand neighbourhood',
  details: 'Show details',
  pin: 'Pin',
  unpin: 'Unpin',
  noCandidates: 'No nodes within 500 px',
});

/** The text and class of one Connect to… candidate, e.g. "→ X (κ: 0→1 — creates feedback loop)". */
export function impactLabel(label, p) {
  let what = 'no change';
  if (p.createsNewSCC) what = 'creates feedback loop';
  else if (p.enlargesExistingSCC) what = 'enlarges feedback loop';
  else if (p.kappaAfter !== p.kappaBefore) what = 'changes κ';
  const changes = what !== 'no change';
  return { text: `→ ${label} (κ: ${p.kappaBefore}→${p.kappaAfter} — ${what})`, className: changes ? 'impact-loop' : 'impact-none' };
}

/** The nearest candidate whose edge node→candidate would put node on a feedback loop, or null. */
export function bendTarget(plane, node) {
  for (const candidate of nodesNear(plane, node, CONNECT_RADIUS)) {
    const p = previewOnPlane(plane, node.id, candidate.id);
    if (p.createsNewSCC || p.enlargesExistingSCC) return { candidate, preview: p };
  }
  return null;
}

/** The fault line Unbend removes for a node in an SCC: the first one touching the node, else the first. */
export function unbendPlan(plane, node) {
  const scc = sccOfNode(plane, node.id);
  if (!scc || scc.kappa <= 0 || scc.faultLineEdges.length === 0) return null;
  const fault = scc.faultLineEdges.find((f) => f.source === node.id || f.target === node.id) ?? scc.faultLineEdges[0];
  const edges = plane.edges.filter((e) => {
    const arc = edgeArc(e);
    return arc !== null && arc[0] === fault.source && arc[1] === fault.target;
  });
  const before = getTopology(plane).maxKappa;
  const after = kappaWithout(plane, edges);
  const x = nodeById(plane, fault.source)?.label ?? fault.source;
  const y = nodeById(plane, fault.target)?.label ?? fault.target;
  return { fault, edges, before, after, message: `Remove edge ${x}→${y}? This breaks the feedback loop (κ: ${before}→${after}).` };
}

export class ContextMenu {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    document.addEventListener('pointerdown', (ev) => {
      if (!this.root.contains(ev.target)) this.close();
    });
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') this.close();
    });
  }

  close() {
    this.root.hidden = true;
    this.root.replaceChildren();
  }

  item(text, { onClick, disabled = false, className = '', testId } = {}) {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = `menu-item ${className}`.trim();
    el.textContent = text;
    el.disabled = disabled;
    if (testId) el.dataset.testid = testId;
    if (onClick && !disabled) {
      el.addEventListener('click', (ev) => {
        ev.stopPropagation();
        onClick();
      });
    }
    return el;
  }

  openFor(node, clientX, clientY) {
    const { plane } = this.app;
    this.close();
    const list = document.createElement('div');
    list.className = 'menu-list';
    const connect = this.item(TEXT.connect, { className: 'has-submenu', testId: 'menu-connect' });
    const submenu = document.createElement('div');
    submenu.className = 'submenu';
    submenu.hidden = true;
    const openSubmenu = () => {
      if (!submenu.hidden) return;
      submenu.hidden = false;
      this.fillConnect(submenu, node); // lazily: only now are the previews computed
      const r = this.root.getBoundingClientRect();
      this.place(r.left, r.top);
    };
    connect.addEventListener('mouseenter', openSubmenu);
    connect.addEventListener('click', (ev) => {
      ev.stopPropagation();
      openSubmenu();
    });
    list.append(connect);
    const scc = sccOfNode(plane, node.id);
    if (scc && scc.kappa > 0) {
      list.append(this.item(TEXT.unbend, { testId: 'menu-unbend', onClick: () => this.unbend(node) }));
    } else {
      const target = bendTarget(plane, node);
      list.append(
        target
          ? this.item(TEXT.bend, { testId: 'menu-bend', onClick: () => { this.close(); this.app.connect(node.id, target.candidate.id); } })
          : this.item(TEXT.noBend, { disabled: true, className: 'impact-none', testId: 'menu-bend' }),
      );
    }
    if (node.data) list.append(this.item(TEXT.expand, { testId: 'menu-expand', onClick: () => { this.close(); this.app.expand(node.id); } }));
    list.append(this.item(TEXT.details, { onClick: () => { this.close(); this.app.select(node.id); } }));
    list.append(this.item(node.pinned ? TEXT.unpin : TEXT.pin, { onClick: () => { node.pinned = !node.pinned; this.close(); } }));
    this.root.append(list, submenu);
    this.place(clientX + 4, clientY + 4); // not under the pointer: hovering must open the submenu
  }

  /** Show the menu at (x, y), shifted so that it stays inside the window. */
  place(x, y) {
    this.root.style.left = `${x}px`;
    this.root.style.top = `${y}px`;
    this.root.hidden = false;
    const r = this.root.getBoundingClientRect();
    const margin = 8;
    if (r.right > innerWidth - margin) this.root.style.left = `${Math.max(margin, x - (r.right - innerWidth + margin))}px`;
    if (r.bottom > innerHeight - margin) this.root.style.top = `${Math.max(margin, y - (r.bottom - innerHeight + margin))}px`;
  }

  fillConnect(submenu, node) {
    const { plane } = this.app;
    const candidates = nodesNear(plane, node, CONNECT_RADIUS);
    if (candidates.length === 0) {
      submenu.append(this.item(TEXT.noCandidates, { disabled: true, className: 'impact-none' }));
      return;
    }
    for (const candidate of candidates) {
      const { text, className } = impactLabel(candidate.label, previewOnPlane(plane, node.id, candidate.id));
      const el = this.item(text, { className, onClick: () => { this.close(); this.app.connect(node.id, candidate.id); } });
      el.dataset.target = candidate.id;
      submenu.append(el);
    }
  }

  unbend(node) {
    const plan = unbendPlan(this.app.plane, node);
    this.close();
    if (plan) this.app.confirm(plan.message, () => this.app.removeArc(plan));
  }
}
