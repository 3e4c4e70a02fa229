// The inspector's only way to the server: the public /v1 API with the API
// key the user pasted, kept in sessionStorage (never in a URL, a cookie or
// a log). The server decides what the key may do; the inspector only hides
// the controls a key's role could not use.
const KEY = "engram.apiKey";

export class ApiError extends Error {
  constructor(status, code, message, requestId, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.field = field;
  }
}

export const session = {
  key() { return sessionStorage.getItem(KEY) || ""; },
  signIn(key) { sessionStorage.setItem(KEY, key.trim()); },
  signOut() { sessionStorage.removeItem(KEY); session.who = null; },
  who: null, // GET /v1/whoami of the key: {tenant, role, users, ...}
  can(role) {
    const order = { read: 0, write: 1, admin: 2, operator: 3 };
    return !!session.who && order[session.who.role] >= order[role];
  },
};

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const t = q.toString();
  return t ? "?" + t : "";
}

export async function call(method, path, { params, body } = {}) {
  const headers = { Authorization: "Bearer " + session.key() };
  const init = { method, headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path + query(params), init);
  } catch (e) {
    throw new ApiError(0, "network", "the server cannot be reached", "");
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || "http_" + res.status, e.message || `HTTP ${res.status}`,
      e.request_id || res.headers.get("X-Request-Id") || "", e.field || "");
  }
  return data;
}

export const get = (path, params) => call("GET", path, { params });
export const post = (path, body) => call("POST", path, { body });
export const patch = (path, body) => call("PATCH", path, { body });
export const del = (path, params) => call("DELETE", path, { params });
