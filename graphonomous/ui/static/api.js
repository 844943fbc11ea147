// The page's client of the `graphonomous ui` JSON API (graphonomous/ui/server.py).
//
// Rules: same origin only; the bearer token, if the server needs one, comes from the page's URL
// fragment (#token=…, never sent to a server) and is kept in sessionStorage; every payload sent
// is canonical snake_case; a failed call throws ApiError with the server's code/field/message.

const TOKEN_KEY = 'graphonomous.token';

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail?.field ? `${detail.field}: ${detail.message}` : detail?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = detail?.code ?? 'http';
    this.field = detail?.field ?? null;
  }
}

function token() {
  const match = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const payload = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, payload?.error);
  return payload;
}

const q = (params) => new URLSearchParams(params).toString();

export const api = {
  config: () => call('GET', '/api/config'),
  relationships: () => call('GET', '/relationships.json'),
  graph: (limit) => call('GET', `/api/graph${limit ? `?${q({ limit })}` : ''}`),
  search: (text, limit) => call('GET', `/api/search?${q({ q: text, ...(limit ? { limit } : {}) })}`),
  node: (id) => call('GET', `/api/node?${q({ id })}`),
  expand: (id, depth = 1) => call('GET', `/api/expand?${q({ id, depth })}`),
  stats: () => call('GET', '/api/stats'),
  overview: (depth = 1) => call('GET', `/api/overview?${q({ depth })}`),
  topology: (doc) => call('POST', '/api/topology', doc),
  addEdge: (sourceId, targetId, relationship) => call('POST', '/api/edges', { source_id: sourceId, target_id: targetId, relationship }),
  deleteEdges: (edgeIds) => call('POST', '/api/edges/delete', { edge_ids: edgeIds }),
  consolidate: () => call('POST', '/api/consolidation', {}),
};
